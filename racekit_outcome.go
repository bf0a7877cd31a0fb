package racekit

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

// Want is what a scenario must do, stated as values and compared with a
// Result's: pass; fail at an assertion, having seen a value; or, for an
// exploration, fail in exactly the runs named, each at an assertion. A
// test of a scenario's outcome states it so, in Go (a table of Wants) or
// in the scenario's header (# want: ...), and never matches the log.
type Want struct {
	pass bool
	// command is the failing line's command and arguments as the
	// scenario writes them (Failure.Command); got, if set, the value its
	// claim saw (Failure.Got).
	command, got string
	// runs are, for an exploration, the runs that must fail, and no
	// other; nil for a scenario without an explore line.
	runs []WantRun
}

// WantRun is one run of an exploration that must fail: its moment (the
// hook's trigger, "before rabbitmq update rabbitmqclusters/r 1st"), its
// interferer ("mark stale"), and where it fails.
type WantRun struct {
	Moment, Interferer string
	Fails              Want
}

// Passes is the outcome of a scenario that must pass, or of an exploration
// in which no run may fail.
func Passes() Want { return Want{pass: true} }

// FailsAt is the outcome of a scenario that must fail at the assertion
// command, with its arguments as the command sees them (quotes taken off,
// $VARs expanded), or the first of them: FailsAt("field
// statefulsets/r-server spec.replicas 3"), or FailsAt("field
// statefulsets/r-server metadata.uid") for a line that ends in $UID.
func FailsAt(command string) Want { return Want{command: command} }

// Saw returns w requiring too that the failed claim saw got, the value on
// the +got side of its diff ("2"), or NotFound when its object was gone.
func (w Want) Saw(got string) Want {
	w.got = got
	return w
}

// NotFound is what a failed claim saw when the object it reads was not
// there: FailsAt("field deployments/web spec.replicas 2").Saw(NotFound).
const NotFound = "<not found>"

// Finds is the outcome of an exploration that fails in exactly the runs
// given, each where its Fails says; runs that are n/a do not count.
// Finds() with no run is an exploration in which no run may fail.
func Finds(runs ...WantRun) Want { return Want{runs: append([]WantRun{}, runs...)} }

// String renders w as a scenario's header writes it (ParseWant).
func (w Want) String() string {
	switch {
	case w.pass:
		return "pass"
	case w.runs != nil && len(w.runs) == 0:
		return "find no failing run"
	case w.runs != nil:
		var parts []string
		for _, r := range w.runs {
			parts = append(parts, fmt.Sprintf("%s with %s: %s", r.Moment, r.Interferer, r.Fails))
		}
		return "finds " + strings.Join(parts, "; ")
	case w.got != "":
		return "fail at " + w.command + " saw " + w.got
	}
	return "fail at " + w.command
}

// ParseWant reads what a scenario's header says it must do, the text after
// "# want: ": "pass", "fail at COMMAND" or "fail at COMMAND saw GOT".
func ParseWant(s string) (Want, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "pass":
		return Passes(), nil
	case strings.HasPrefix(s, "fail at "):
		cmd, got, saw := strings.Cut(strings.TrimPrefix(s, "fail at "), " saw ")
		if strings.TrimSpace(cmd) == "" {
			break
		}
		w := FailsAt(strings.TrimSpace(cmd))
		if saw {
			w = w.Saw(strings.TrimSpace(got))
		}
		return w, nil
	}
	return Want{}, fmt.Errorf("bad want %q: want pass, fail at COMMAND ARGS... or fail at COMMAND ARGS... saw VALUE", s)
}

// Check returns nil when r did what w says, or an error that says how it
// did not, with its failures.
func (r Result) Check(w Want) error {
	if w.runs != nil || (w.pass && r.Explored != nil) {
		return r.checkExplored(w)
	}
	switch {
	case r.Skipped:
		return fmt.Errorf("%s was skipped, want it to %s:\n%s", r.Name, w, r.Log)
	case w.pass && !r.Passed:
		return fmt.Errorf("%s failed, want it to pass:\n%s", r.Name, r.Log)
	case w.pass:
		return nil
	case r.Passed:
		return fmt.Errorf("%s passed, want it to %s", r.Name, w)
	}
	for _, f := range r.Failures {
		if (f.Command == w.command || strings.HasPrefix(f.Command, w.command+" ")) && (w.got == "" || f.Got == w.got) {
			return nil
		}
	}
	return fmt.Errorf("%s failed, but not as it should: want it to %s; its failures:\n%s", r.Name, w, describeFailures(r))
}

// checkExplored checks an exploration's runs against w.runs: the failed
// runs must be exactly those, each failing where it says.
func (r Result) checkExplored(w Want) error {
	if r.Explored == nil {
		return fmt.Errorf("%s explored nothing, want it to %s:\n%s", r.Name, w, r.Log)
	}
	var errs []string
	found := make([]bool, len(w.runs))
	for _, il := range r.Explored.Failed() {
		var moments, interferers []string
		for _, h := range il.Hooks {
			moments, interferers = append(moments, h.Trigger()), append(interferers, h.Interferer)
		}
		moment, interferer := strings.Join(moments, " + "), strings.Join(interferers, " + ")
		matched := false
		for i, want := range w.runs {
			if want.Moment != moment || want.Interferer != interferer {
				continue
			}
			matched = true
			found[i] = true
			run := Result{Result: r.Result}
			run.Name, run.Passed, run.Failures, run.Log = il.Name, false, il.Failures, il.Log
			if err := run.Check(want.Fails); err != nil {
				errs = append(errs, err.Error())
			}
		}
		if !matched {
			errs = append(errs, fmt.Sprintf("the run at %s with %s failed, and no want names it: %s%s", moment, interferer, il.Failure, moreLines(il.Failures)))
		}
	}
	for i, want := range w.runs {
		if !found[i] {
			errs = append(errs, fmt.Sprintf("the run at %s with %s did not fail, want it to %s", want.Moment, want.Interferer, want.Fails))
		}
	}
	if len(errs) == 0 && w.pass && !r.Passed {
		errs = append(errs, "no run failed, but the scenario did:\n"+r.Log)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: %s\n%s", r.Name, strings.Join(errs, "\n"), r.Explored.Table())
	}
	return nil
}

// moreLines returns the lines after the first of each failure in fs,
// indented, each failure's after a line naming it, or "" when every
// failure is one line: the table and the one-line Failure show only the
// first, and an unexpected failure is read from what follows it (the
// calls an await's actor made, the diff of a field).
func moreLines(fs []Failure) string {
	var b strings.Builder
	for _, f := range fs {
		first, rest, ok := strings.Cut(f.Text(), "\n")
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "\n    %s", first)
		for line := range strings.SplitSeq(rest, "\n") {
			fmt.Fprintf(&b, "\n      %s", line)
		}
	}
	return b.String()
}

// describeFailures lists r's failures as values, one a line.
func describeFailures(r Result) string {
	var b strings.Builder
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "  %s: %s", f.Pos(), f.Command)
		if f.Want != "" || f.Got != "" {
			fmt.Fprintf(&b, " (want %s, got %s)", f.Want, f.Got)
		}
		first, _, _ := strings.Cut(f.Message, "\n")
		fmt.Fprintf(&b, ": %s\n", first)
	}
	if len(r.Failures) == 0 {
		b.WriteString(r.Log)
	}
	return b.String()
}

// Expect fails t for each result that does not do what want says of it, by
// scenario name, or, when want has no entry for it, what its file's header
// says (# want: ...); a result that neither names fails t, and so does a
// name in want that no result has. It is what a test of a scenario's
// outcome calls after Play.
func Expect(t testing.TB, results []Result, want map[string]Want) {
	t.Helper()
	ran := map[string]bool{}
	for _, r := range results {
		ran[r.Name] = true
		w, ok := want[r.Name]
		if !ok {
			if r.Want == nil {
				t.Errorf("%s: nothing says what it must do: add it to the table, or a # want: line to its header", r.Name)
				continue
			}
			w = *r.Want
		}
		if err := r.Check(w); err != nil {
			t.Error(err)
		}
	}
	var missing []string
	for name := range want {
		if !ran[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		t.Errorf("%s did not run: want says what it must do", name)
	}
}

// headerWant reads the # want: line of the scenario in file, before its
// first command, if it has one.
func headerWant(file string) (*Want, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
		case strings.HasPrefix(line, "# want:"):
			w, err := ParseWant(strings.TrimPrefix(line, "# want:"))
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", file, n, err)
			}
			return &w, nil
		case strings.HasPrefix(line, "#"):
		default:
			return nil, sc.Err()
		}
	}
	return nil, sc.Err()
}
