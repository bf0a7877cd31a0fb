package language

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// try and repeat run another command: a workload that some interleavings
// refuse, or a longer one.
var flowCommands = []*Command{
	{
		Name: "try", Args: "COMMAND ARGS...", Group: "race", MinArgs: 1, MaxArgs: -1,
		Summary:  "run COMMAND, and go on whether it succeeds or fails; its error goes to stdout",
		Detail:   "run COMMAND, and go on whether it succeeds or fails; its error goes to stdout: for an explore workload that some interleavings refuse (a reconcile that returns a conflict, that a crash killed, or that is stopped as an unbounded retry; an await that a crash of what it waits for cuts short), so that the invariants, not the workload's error, judge each one",
		Hookable: true, Run: runTry,
	},
	{
		Name: "repeat", Args: "N COMMAND ARGS...", Group: "race", MinArgs: 2, MaxArgs: -1,
		Summary: "run COMMAND N times in a row (1 to 100), stopping at the first failure: a longer workload for explore, such as repeat 4 reconcile webapps/web",
		Run:     runRepeat,
	},
}

// Tried is an error that says for itself what try prints of it, after the
// command's name: a crashed reconcile says "crashed: ...", not that it
// failed.
type Tried interface {
	error
	Tried() string
}

// Workload returns the command called name for by (try, repeat, explore),
// which run a workload or a writer: not an assertion, nor explore and its
// lines, nor another try or repeat, nor, but for try, a command about what
// runs on its own (try await goes on after a crash cut the wait short).
func (sc *Scenario) Workload(by, name string) (*Command, error) {
	cmd, ok := sc.run.cmds[name]
	switch {
	case !ok:
		return nil, UsageError("unknown command %q%s", name, suggest(name, sc.CommandNames()))
	case cmd.Group == "assert" || cmd.Group == "run" && by != "try" || slices.Contains([]string{"try", "repeat", "explore", "with"}, cmd.Name):
		return nil, UsageError("%s runs a workload or a writer, not %s", by, cmd.Name)
	}
	return cmd, nil
}

func runTry(sc *Scenario, inv Invocation) error {
	cmd, err := sc.Workload("try", inv.Args[0])
	switch {
	case err != nil:
		return err
	case inv.InHook && !cmd.Hookable:
		return UsageError("%s cannot run as a hook action, tried or not", cmd.Name)
	}
	err = cmd.Call(sc, Invocation{Args: inv.Args[1:], Stdout: inv.Stdout, Pos: inv.Pos, InHook: inv.InHook, Ctx: inv.Ctx, Setenv: inv.Setenv, Defer: inv.Defer})
	if isUsage(err) {
		return err
	}
	var tried Tried
	switch {
	case errors.As(err, &tried):
		fmt.Fprintf(inv.Stdout, "%s %s\n", inv.Args[0], tried.Tried())
	case err != nil:
		fmt.Fprintf(inv.Stdout, "%s failed: %v\n", inv.Args[0], strings.SplitN(err.Error(), "\n", 2)[0])
	}
	return nil
}

func runRepeat(sc *Scenario, inv Invocation) error {
	n, err := strconv.Atoi(inv.Args[0])
	if err != nil || n < 1 || n > 100 {
		return UsageError("bad count %q: want a whole number from 1 to 100", inv.Args[0])
	}
	cmd, err := sc.Workload("repeat", inv.Args[1])
	if err != nil {
		return err
	}
	for i := 1; i <= n; i++ {
		if err := cmd.Call(sc, Invocation{Args: inv.Args[2:], Stdout: inv.Stdout, Pos: inv.Pos, Setenv: inv.Setenv, Defer: inv.Defer}); err != nil {
			return fmt.Errorf("run %d of %d: %w", i, n, err)
		}
	}
	return nil
}

// Command returns the command called name, if the scenario may use it.
func (sc *Scenario) Command(name string) (*Command, bool) {
	c, ok := sc.run.cmds[name]
	return c, ok
}

// CommandNames returns the names of the commands the scenario may use,
// sorted.
func (sc *Scenario) CommandNames() []string { return CommandNames(sc.run.cmds) }

// CommandNames returns the names in cmds, sorted.
func CommandNames(cmds map[string]*Command) []string {
	var out []string
	for n := range cmds {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Hookable returns the names of the commands in cmds that can run as a
// hook's action, as help orders them.
func Hookable(cmds map[string]*Command) []string {
	var out []string
	for _, c := range Sorted(cmds) {
		if c.Hookable {
			out = append(out, c.Name)
		}
	}
	return out
}
