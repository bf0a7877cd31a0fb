package language

import (
	"fmt"
	"slices"
	"strings"
)

// do runs several commands as one: a workload for explore that writes and
// then waits for what a controller running on its own does about it
// (do create job.yaml ; await controller update configmaps/job 200), or
// one hook action that makes two writes.
var doCommands = []*Command{
	{
		Name: "do", Args: "COMMAND ARGS... ; COMMAND ARGS... ; ...", Group: "race", MinArgs: 1, MaxArgs: -1,
		Summary: "run the commands between the ; words in order, stopping at the first that fails: a workload for explore, or one hook action",
		Detail: "run the commands between the ; words in order, stopping at the first that fails (a ; is a word of its own): a workload for explore that may wait (await, idle) for what a controller running on its own does, " +
			"or, when each command can, one hook action; it cannot hold an assertion, an on, an explore or with line, or another do",
		Hookable: true, Run: runDo,
	},
}

// DoSeparator separates do's commands.
const DoSeparator = ";"

// DoParts splits do's arguments at each ";" into its commands' words. It
// refuses an empty part: two ";" in a row, or one at either end.
func DoParts(args []string) ([][]string, error) {
	var parts [][]string
	start := 0
	for i := 0; i <= len(args); i++ {
		if i < len(args) && args[i] != DoSeparator {
			continue
		}
		if i == start {
			where := fmt.Sprintf("between the ; words %d and %d", len(parts), len(parts)+1)
			switch {
			case len(args) == 0:
				where = "at all"
			case i == 0:
				where = "before the first ;"
			case i == len(args):
				where = "after the last ;"
			}
			return nil, UsageError("command %d of do is empty (nothing %s): want COMMAND ARGS... ; COMMAND ARGS..., a command before, between and after the ; words", len(parts)+1, where)
		}
		parts = append(parts, args[start:i])
		start = i + 1
	}
	return parts, nil
}

// CheckDo reports what keeps do's arguments, args, from running: an empty
// part, a command of cmds that is unknown or cannot be a part of do, and,
// asHook, one that cannot run as a hook's action. explore checks its
// workload and its interferers with it before anything runs.
func CheckDo(cmds map[string]*Command, args []string, asHook bool) error {
	parts, err := DoParts(args)
	if err != nil {
		return err
	}
	for i, p := range parts {
		if _, err := doPart(cmds, i+1, p, asHook); err != nil {
			return err
		}
	}
	return nil
}

// doPart returns the command of part n of do, words, or why it cannot be
// one.
func doPart(cmds map[string]*Command, n int, words []string, asHook bool) (*Command, error) {
	name := words[0]
	if name == "!" {
		if len(words) == 1 {
			return nil, UsageError("command %d of do is a lone \"!\"", n)
		}
		name = words[1]
	}
	c, ok := cmds[name]
	if !ok || c.Hidden {
		var names []string
		for _, c := range cmds {
			if !c.Hidden {
				names = append(names, c.Name)
			}
		}
		return nil, UsageError("command %d of do: unknown command %q%s", n, name, suggest(name, names))
	}
	switch {
	case c.Group == "assert":
		return nil, UsageError("command %d of do: %s is an assertion: assertions go on lines of their own, after the workload (under the with lines, for explore)", n, name)
	case name == "on":
		return nil, UsageError("command %d of do: on arms a hook on a line of its own (its action may be a do)", n)
	case slices.Contains([]string{"explore", "with", "do"}, name):
		return nil, UsageError("command %d of do: %s cannot be part of do", n, name)
	case asHook && !c.Hookable:
		return nil, UsageError("command %d of do: %s cannot run as a hook action, so neither can this do; these can: %s", n, name, strings.Join(Hookable(cmds), ", "))
	}
	return c, nil
}

func runDo(sc *Scenario, inv Invocation) error {
	parts, err := DoParts(inv.Args)
	if err != nil {
		return err
	}
	cmds := make([]*Command, len(parts))
	for i, p := range parts {
		if cmds[i], err = doPart(sc.run.cmds, i+1, p, inv.InHook); err != nil {
			return err
		}
	}
	for i, p := range parts {
		neg := p[0] == "!"
		if neg {
			p = p[1:]
		}
		sub := inv
		sub.Neg, sub.Args = neg, p[1:]
		if err := cmds[i].Call(sc, sub); err != nil {
			return fmt.Errorf("command %d of %d, %s: %w", i+1, len(parts), strings.Join(parts[i], " "), err)
		}
	}
	return nil
}

// SplitWords splits a script line into its words as testscript does, at
// spaces outside single quotes (inside them, two quotes in a row are
// one) and up to a # outside them, without expanding $VARs: for explore,
// which reads its workload from the file.
func SplitWords(line string) []string {
	var words []string
	var w strings.Builder
	in, quoted := false, false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		if ch == '#' && !quoted {
			break // the rest of the line is a comment
		}
		switch {
		case ch == '\'' && quoted && i+1 < len(line) && line[i+1] == '\'':
			w.WriteByte('\'')
			i++
		case ch == '\'':
			quoted, in = !quoted, true
		case !quoted && (ch == ' ' || ch == '\t' || ch == '\r'):
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(ch)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}
