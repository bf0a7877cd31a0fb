package explore

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/racekit/racekit/harness/language"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/racekit/racekit/hooks"
)

// An explore scenario names a workload, the interferers to hook into it,
// and the invariants that must hold whatever the moment:
//
//	create webapp.yaml
//	explore reconcile webapps/web
//	with annotate bob deployments/web team=blue
//	with scale alice deployments/web 5
//	annotation deployments/web team=blue
//
// Explore runs the script up to the explore line and the workload alone
// (the learning run), lists every moment of the workload's calls, and runs
// the script again, in a fresh namespace, once per moment and interferer,
// with the interferer hooked at that moment: the explore line becomes
// "on MOMENT: INTERFERER", the first with line the workload. Every line
// keeps its number, so a failure names the line of the original file.

// MaxDepth bounds the moments one interleaving hooks.
const MaxDepth = 2

// DefaultParallel is how many interleavings run at once unless told: four
// per CPU, since each waits on the API server most of its time (eight on
// two cores). Runs that need the same fixed port (spawn ... ports=) take
// turns for it whatever the number.
func DefaultParallel() int { return 4 * runtime.NumCPU() }

// exploration is an explore scenario, parsed.
type exploration struct {
	file  string
	ar    *txtar.Archive
	lines []string // the script, by line
	at    int      // the explore line's index in lines
	// workload is the explore line's command, as written after
	// "explore [depth=N]"; interferers are the with lines', whose
	// indexes are withAt.
	workload    string
	interferers []interferer
	withAt      []int
	depth       int
	// only are the explore line's only= values: the resources and
	// objects (of an actor's, with ACTOR:) whose calls' moments count
	// (only.go); all calls' when empty.
	only []string
	// onTheirOwn are the actors that ran on their own in the learning
	// run (start, spawn), whose calls need not recur from run to run.
	onTheirOwn map[string]bool
	// content is the file as read, for the exploration's identity
	// (Report.Script).
	content []byte
	// auto is set for an explore auto line (auto.go): no with lines and
	// no invariants; a layer above makes the runs (Options.Auto). tail
	// are the lines its runs add after the workload, in place of the
	// invariants; none for any other exploration.
	auto bool
	tail []string
	// pre are the lines an explore auto's runs, the learning run among
	// them, run between the setup and the workload, before their hooks
	// are armed (Auto.Prelude); none for any other exploration.
	pre []string
	// learnDone, if set, is called with the learning run's scenario
	// when its script ends (package auto reads its end state).
	learnDone func(*language.Scenario)
}

// builtins are testscript's own commands: after an explore line they
// would run once, in the scenario that only explores, not in each
// interleaving, so the explorer refuses them there.
var builtins = []string{"cd", "chmod", "cmp", "cmpenv", "cp", "env", "exec", "exists", "grep", "kill", "mkdir", "mv", "rm", "skip", "stderr", "stdin", "stdout", "stop", "symlink", "unix2dos", "unquote", "wait", "ttyin", "ttyout"}

// interferer is a with line: a command, hooked at one occurrence of a
// moment's call, or at every occurrence (with every ...). label names it
// in run names when there are several (labels).
type interferer struct {
	cmd   string
	every bool
	label string
}

// line returns the interferer as its with line writes it, after "with".
func (in interferer) line() string {
	if in.every {
		return "every " + in.cmd
	}
	return in.cmd
}

// invariants returns the lines under the with lines that are commands.
func (e *exploration) invariants() []string {
	var out []string
	for _, line := range e.lines[e.withAt[len(e.withAt)-1]+1:] {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// labels names each interferer in run names, when there are several: its
// command's first two words (annotate_bob), or, when that names two
// interferers hooked alike (every or not), the fewest first words that
// tell them apart, and a number after the name when even their whole
// commands coincide. The first two words stay where they are unique, so
// that the names goldens and docs show do not change.
func labels(ins []interferer) {
	word := func(in interferer, n int) string {
		f := strings.Fields(in.cmd)
		return strings.Trim(notName.ReplaceAllString(strings.Join(f[:min(n, len(f))], "_"), "_"), "_")
	}
	clash := func(i, n int) bool {
		for j := range ins {
			if j != i && ins[j].every == ins[i].every && word(ins[j], n) == word(ins[i], n) {
				return true
			}
		}
		return false
	}
	for i := range ins {
		n := 2
		for clash(i, n) && n < len(strings.Fields(ins[i].cmd)) {
			n++
		}
		ins[i].label = word(ins[i], n)
	}
	seen := map[string]int{}
	for i := range ins {
		k := fmt.Sprint(ins[i].every, " ", ins[i].label)
		seen[k]++
		if seen[k] > 1 {
			ins[i].label += "_" + strconv.Itoa(seen[k])
		}
	}
}

// parseExploration reads the explore scenario in file; cmds are the
// commands its lines may name.
func parseExploration(file string, cmds map[string]*language.Command) (*exploration, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if err := language.CheckArchive(filepath.Base(file), data); err != nil {
		return nil, err
	}
	e := &exploration{file: file, ar: txtar.Parse(data), at: -1, depth: 1, content: data}
	e.lines = strings.Split(string(e.ar.Comment), "\n")
	pos := func(i int) string { return fmt.Sprintf("%s:%d", filepath.Base(file), i+1) }
	for i, line := range e.lines {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch {
		case f[0] == "explore" && e.at >= 0:
			return nil, fmt.Errorf("%s: a second explore line; a scenario explores one workload (the first is at line %d)", pos(i), e.at+1)
		case f[0] == "explore":
			if err := e.parseExplore(i, line, cmds, pos(i)); err != nil {
				return nil, err
			}
		case e.auto && f[0] == "with":
			return nil, fmt.Errorf("%s: explore auto takes no with lines: it makes its own faults (restarts, stale views) from the learning run; remove the with line, or write explore without auto", pos(i))
		case e.auto && i > e.at:
			return nil, fmt.Errorf("%s: explore auto takes no invariants: it compares each run's end state with the reference runs'; remove the line %q, or write explore without auto", pos(i), strings.TrimSpace(line))
		case f[0] == "with" && (e.at < 0 || len(e.withAt) > 0 && e.withAt[len(e.withAt)-1] != prevCommand(e.lines, i)):
			return nil, fmt.Errorf("%s: a with line belongs right under an explore line (or another with line)", pos(i))
		case f[0] == "with":
			if err := e.parseWith(i, line, cmds, pos(i)); err != nil {
				return nil, err
			}
		case e.at >= 0 && slices.Contains(builtins, f[0]):
			return nil, fmt.Errorf("%s: %s is testscript's own command; under an explore line only racekit's commands check the invariants, in every interleaving", pos(i), f[0])
		}
	}
	switch {
	case e.at < 0:
		return nil, fmt.Errorf("%s: no explore line", filepath.Base(file))
	case e.auto:
		return e, nil
	case len(e.interferers) == 0:
		return nil, fmt.Errorf("%s: explore has no with line: name at least one interferer, such as with annotate bob deployments/web team=blue", pos(e.at))
	}
	labels(e.interferers)
	return e, nil
}

// parseExplore reads the explore line at index i, at pos: its depth, its
// only= values and its workload, which must be a command that can be one.
func (e *exploration) parseExplore(i int, line string, cmds map[string]*language.Command, pos string) error {
	e.at = i
	rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "explore"))
	depth := false
	for {
		opt, after, _ := strings.Cut(rest, " ")
		switch {
		case strings.HasPrefix(opt, "depth=") && e.auto:
			return fmt.Errorf("%s: explore auto takes no depth=: its runs each hold one fault", pos)
		case strings.HasPrefix(opt, "depth=") && depth:
			return fmt.Errorf("%s: depth= given twice", pos)
		case strings.HasPrefix(opt, "depth="):
			n, err := strconv.Atoi(strings.TrimPrefix(opt, "depth="))
			if err != nil || n < 1 || n > MaxDepth {
				return fmt.Errorf("%s: bad %q: want depth=1 or depth=2", pos, opt)
			}
			e.depth, depth = n, true
		case opt == "auto" && e.auto:
			return fmt.Errorf("%s: auto given twice", pos)
		case opt == "auto" && depth:
			return fmt.Errorf("%s: explore auto takes no depth=: its runs each hold one fault", pos)
		case opt == "auto":
			e.auto = true
		case strings.HasPrefix(opt, "only="):
			v := strings.TrimPrefix(opt, "only=")
			if err := parseOnly(v, pos); err != nil {
				return err
			}
			e.only = append(e.only, v)
		default:
			return e.parseWorkload(rest, cmds, pos)
		}
		rest = strings.TrimSpace(after)
	}
}

// parseWorkload reads the explore line's workload, rest, at pos.
func (e *exploration) parseWorkload(rest string, cmds map[string]*language.Command, pos string) error {
	if rest == "" {
		return fmt.Errorf("%s: explore names no workload: want explore [depth=N] [only=[ACTOR:]RESOURCE[/NAME[/SUB]]]... COMMAND ARGS..., such as explore reconcile webapps/web", pos)
	}
	wf := strings.Fields(rest)
	c, ok := cmds[wf[0]]
	switch {
	case wf[0] == "!":
		return fmt.Errorf("%s: the workload cannot be negated: an interleaving in which it fails fails; use settle for a workload that may be refused and retried", pos)
	case !ok:
		return fmt.Errorf("%s: unknown workload command %q%s", pos, wf[0], language.Suggest(wf[0], language.CommandNames(cmds)))
	case c.Group == "assert" || c.Group == "run" || wf[0] == "explore" || wf[0] == "with" || wf[0] == "on":
		return fmt.Errorf("%s: %s cannot be a workload: a workload is a reconcile, a settle, a writer command, or a do of such commands and waits (do create job.yaml ; await controller update configmaps/job 200)", pos, wf[0])
	case wf[0] == "do":
		if err := language.CheckDo(cmds, language.SplitWords(rest)[1:], false); err != nil {
			return fmt.Errorf("%s: explore's workload: %s", pos, strings.TrimPrefix(err.Error(), "usage: "))
		}
	}
	e.workload = rest
	return nil
}

// parseWith reads the with line at index i, at pos: its interferer, which
// must be a command that can run as a hook's action.
func (e *exploration) parseWith(i int, line string, cmds map[string]*language.Command, pos string) error {
	if e.withAt == nil && prevCommand(e.lines, i) != e.at {
		return fmt.Errorf("%s: a with line belongs right under an explore line (or another with line)", pos)
	}
	in := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "with"))
	every := false
	if rest, ok := strings.CutPrefix(in, "every "); ok {
		in, every = strings.TrimSpace(rest), true
	}
	if in == "" {
		return fmt.Errorf("%s: with names no interferer: want with COMMAND ARGS..., such as with annotate bob deployments/web team=blue", pos)
	}
	name := strings.Fields(in)[0]
	if name == "!" {
		name = strings.Fields(in)[1]
	}
	c, ok := cmds[name]
	switch {
	case !ok:
		return fmt.Errorf("%s: unknown interferer command %q%s", pos, name, language.Suggest(name, language.CommandNames(cmds)))
	case !c.Hookable:
		return fmt.Errorf("%s: %s cannot interfere: an interferer runs as a hook's action, and these can: %s", pos, name, strings.Join(language.Hookable(cmds), ", "))
	case name == "do":
		words := language.SplitWords(strings.TrimPrefix(in, "!"))
		if err := language.CheckDo(cmds, words[1:], true); err != nil {
			return fmt.Errorf("%s: the interferer: %s", pos, strings.TrimPrefix(err.Error(), "usage: "))
		}
	}
	e.interferers = append(e.interferers, interferer{cmd: in, every: every})
	e.withAt = append(e.withAt, i)
	return nil
}

// prevCommand returns the index of the last line before i that is not
// blank or a comment, or -1.
func prevCommand(lines []string, i int) int {
	for j := i - 1; j >= 0; j-- {
		f := strings.Fields(lines[j])
		if len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			return j
		}
	}
	return -1
}

// script returns the scenario with the explore line and its with lines
// replaced by heads (hook lines, or the learning run's marker) followed by
// the workload, each on a line of its own. The lines after keep their
// numbers when there are slots enough; without invariants, they become
// comments (the learning run).
func (e *exploration) script(heads []string, invariants bool) []byte {
	lines := append([]string(nil), e.lines...)
	if !invariants {
		last := e.at
		if n := len(e.withAt); n > 0 {
			last = e.withAt[n-1]
		}
		for i := last + 1; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) != "" {
				lines[i] = "# " + strings.TrimSpace(lines[i])
			}
		}
	}
	content := append(append(append([]string(nil), heads...), e.workload), e.tail...)
	slots := append([]int{e.at}, e.withAt...)
	for _, s := range slots {
		lines[s] = "# " + strings.TrimSpace(lines[s])
	}
	if len(content) <= len(slots) {
		for i, c := range content {
			lines[slots[i]] = c
		}
	} else {
		lines[e.at] = strings.Join(content, "\n")
	}
	return txtar.Format(&txtar.Archive{Comment: []byte(strings.Join(lines, "\n")), Files: e.ar.Files})
}

// Moment is a point of the workload's run where an interferer can be
// hooked: before one of its calls is sent, or after its answer arrives.
type Moment struct {
	Point  string // before or after
	Actor  string
	Verb   string
	Object string // as the trace names it: deployments/web/status
	Occ    int    // the call's occurrence among the workload's calls like it
}

// Trigger renders m as the left side of an on command.
func (m Moment) Trigger() string {
	return fmt.Sprintf("%s %s %s %s %s", m.Point, m.Actor, m.Verb, m.Object, hooks.Ordinal(m.Occ))
}

var notName = regexp.MustCompile(`[^a-zA-Z0-9-]+`)

// Name is m as a subtest name: after_controller_get_deployments_web_1st.
func (m Moment) Name() string {
	return strings.Trim(notName.ReplaceAllString(m.Trigger(), "_"), "_")
}

// Hook is one interferer at one moment: at the moment's call, or, with
// Every, at that call and every later one like it (a writer that keeps
// writing).
type Hook struct {
	Moment     Moment
	Interferer string
	Every      bool
	// label names the interferer in the run's name (labels).
	label string
}

// Trigger renders the left side of h's on command.
func (h Hook) Trigger() string {
	if h.Every {
		m := h.Moment
		return fmt.Sprintf("%s %s %s %s every", m.Point, m.Actor, m.Verb, m.Object)
	}
	return h.Moment.Trigger()
}

// Line renders h as the on command that arms it.
func (h Hook) Line() string { return "on " + h.Trigger() + ": " + h.Interferer }
