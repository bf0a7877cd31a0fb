package selfcheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/racekit/racekit/harness/controlplane"
	"github.com/racekit/racekit/harness/language"

	"github.com/rogpeppe/go-internal/txtar"
)

// Twin is a failing twin of an assertion command: a well-formed scenario in
// which the command's claim is false, so that the scenario must fail, at
// that claim, with a message that names the property. An assertion that no
// twin makes fail may pass whatever the truth; its twins are what prove
// that it can fail.
//
// A twin is a file COMMAND.txtar or COMMAND_WHY.txtar (conflicts_alreadyexists.txtar)
// with a "want" section: a regular expression the failure must match. Its
// claim is the last line that runs COMMAND, so that the lines of COMMAND
// before it, which must hold, show that the assertion also passes when it
// should. A command that prints instead of judging (trace) claims nothing
// by itself: its claim is the last cmp or stdout line that checks what it
// printed, and its twin is a golden section that does not match.
type Twin struct {
	// Command is the assertion whose claim the twin makes false.
	Command string
	// File is the twin's path.
	File string
	// Line is the claim's line.
	Line int
	// Want is the twin's "want" section.
	Want *regexp.Regexp
	// runs is true when the claim's line runs Command, not a cmp of what
	// it printed.
	runs bool
}

// errNoTwin marks an assertion command without a failing twin.
var errNoTwin = errors.New("no failing twin")

// FailingTwins returns the failing twins in dir of the assertion commands
// names, in order of command and file. It fails, naming each, on every
// command of names that has no twin, and on every file in dir that is no
// twin of one of names: a file for another command, without a want
// section, or without the command's line.
//
// Racekit's own test calls it with every command of the group assert, so
// that no assertion can be registered without a failing case; a user who
// registers assertion commands can hold them to the same rule, with the
// twins in a folder of their own and Twin.Check.
func FailingTwins(dir string, names []string) ([]Twin, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		return nil, fmt.Errorf("find failing twins: %w", err)
	}
	var twins []Twin
	var errs []error
	have := map[string]bool{}
	for _, file := range files {
		tw, err := readTwin(file, names)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		have[tw.Command] = true
		twins = append(twins, tw)
	}
	for _, name := range names {
		if !have[name] {
			errs = append(errs, fmt.Errorf("%w for the assertion %s: add %s_WHY.txtar, a scenario in which its claim is false",
				errNoTwin, name, filepath.Join(dir, name)))
		}
	}
	slices.SortStableFunc(twins, func(a, b Twin) int { return strings.Compare(a.Command, b.Command) })
	return twins, errors.Join(errs...)
}

// readTwin reads one twin of a command among names.
func readTwin(file string, names []string) (Twin, error) {
	base := filepath.Base(file)
	command, _, _ := strings.Cut(strings.TrimSuffix(base, ".txtar"), "_")
	if !slices.Contains(names, command) {
		return Twin{}, fmt.Errorf("%s: the name does not start with an assertion command (COMMAND_WHY.txtar)%s", file, language.Suggest(command, names))
	}
	if err := language.CheckScript(file); err != nil {
		return Twin{}, err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return Twin{}, fmt.Errorf("read failing twin: %w", err)
	}
	ar := txtar.Parse(data)
	tw := Twin{Command: command, File: file}
	for _, f := range ar.Files {
		if f.Name != "want" {
			continue
		}
		want := strings.TrimSpace(string(f.Data))
		if want == "" {
			break
		}
		if tw.Want, err = regexp.Compile(want); err != nil {
			return Twin{}, fmt.Errorf("%s: the want section is no regular expression: %w", file, err)
		}
	}
	if tw.Want == nil {
		return Twin{}, fmt.Errorf("%s: no want section: add -- want --, a regular expression the failure must match", file)
	}
	tw.Line, tw.runs = claimLine(string(ar.Comment), command)
	if tw.Line == 0 {
		return Twin{}, fmt.Errorf("%s: no line runs %s, so it claims nothing", file, command)
	}
	return tw, nil
}

// claimLine returns the script's last line that runs command, or that
// checks what it printed (cmp stdout, stdout), and whether it runs command;
// 0 when there is none.
func claimLine(script, command string) (line int, runs bool) {
	last := "" // the command whose stdout the next check reads
	for n, text := range strings.Split(script, "\n") {
		words := strings.Fields(text)
		for len(words) > 0 && (words[0] == "!" || words[0] == "?" || strings.HasPrefix(words[0], "[")) {
			words = words[1:]
		}
		if len(words) == 0 || strings.HasPrefix(words[0], "#") {
			continue
		}
		switch {
		case words[0] == command:
			line, runs, last = n+1, true, command
		case checksStdout(words) && last == command:
			line, runs = n+1, false
		default:
			last = words[0]
		}
	}
	return line, runs
}

// checksStdout reports whether a line's words check the stdout of the
// command before it.
func checksStdout(words []string) bool {
	switch words[0] {
	case "stdout":
		return true
	case "cmp", "cmpenv":
		return len(words) > 1 && words[1] == "stdout"
	}
	return false
}

// Check runs the twin on cp, with opts' controllers and commands, and
// returns nil when it fails as a failing twin
// must: its first failure is reported at its claim (file:line: COMMAND
// ...), is no usage error, and matches Want.
func (tw Twin) Check(ctx context.Context, cp *controlplane.ControlPlane, opts language.Options) error {
	opts.Files = []string{tw.File}
	res := language.RunFiles(ctx, cp, opts)
	if len(res) != 1 {
		return fmt.Errorf("%s: ran %d scenarios, want 1", tw.File, len(res))
	}
	return tw.judge(res[0])
}

// judge checks the outcome of a run of tw, from its verdicts and failures
// as values: the first verdict that failed must be the claim's, fail in
// tw.Command and not on its arguments, and what it says must match Want.
// A failure of testscript's own commands (the cmp of a trace) is only in
// the log, which Want is then matched against.
func (tw Twin) judge(r language.Result) error {
	claim := fmt.Sprintf("%s:%d", filepath.Base(tw.File), tw.Line)
	if r.Passed {
		return fmt.Errorf("%s passed, but its claim at %s is false: %s cannot fail there\n%s", tw.File, claim, tw.Command, r.Log)
	}
	i := slices.IndexFunc(r.Verdicts, func(v language.Verdict) bool { return !v.Passed })
	if i < 0 || r.Verdicts[i].Pos() == "" {
		return fmt.Errorf("%s failed without naming file:line; want a failure at %s\n%s", tw.File, claim, r.Log)
	}
	v := r.Verdicts[i]
	if v.Pos() != claim {
		return fmt.Errorf("%s failed at %s, not at its claim %s: the script fails before it claims anything\n%s", tw.File, v.Pos(), claim, r.Log)
	}
	said := r.Log
	if v.Kind != language.FailScript {
		j := slices.IndexFunc(r.Failures, func(f language.Failure) bool { return f.Pos() == v.Pos() && f.Kind == v.Kind })
		if j < 0 {
			return fmt.Errorf("%s failed at %s with no failure recorded there\n%s", tw.File, claim, r.Log)
		}
		f := r.Failures[j]
		name, _, _ := strings.Cut(f.Command, " ")
		switch {
		case tw.runs && (f.Kind != language.FailCommand || name != tw.Command):
			return fmt.Errorf("%s failed at %s, but not in %s: %s", tw.File, claim, tw.Command, f.Text())
		case f.Usage:
			return fmt.Errorf("%s failed at %s on its arguments, not on a false claim: %s", tw.File, claim, f.Text())
		}
		said = f.Pos() + ": " + f.Text()
	}
	if !tw.Want.MatchString(said) {
		return fmt.Errorf("%s failed at %s, but the failure does not match its want section %q\n%s", tw.File, claim, tw.Want, said)
	}
	return nil
}
