package language

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// FailScript is the kind of a verdict, never of a Failure: a command of
// testscript's own (cmp, stdout, exec) that failed and stopped the script.
// racekit does not see it fail; it sees that the script stopped at a line
// none of its commands failed at (Options for RunFiles only).
const FailScript FailureKind = "script"

// Verdict is what one line of a scenario's run decided, as data: an
// assertion (a command of the group assert) that held or did not, with the
// rules its failure names; or a failure of anything else, which stops the
// script (a workload, a negated write whose refusal did not come) or is
// found at its end (a hook that never fired, a hook's action that failed,
// a controller that would not halt). Result.Verdicts lists a run's in
// order, for comparing runs that must agree (CheckNoise).
//
// A verdict names rules by object and rule, not by the text that explains
// them: the text quotes the trace's symbols (#12, rv3), which other calls
// in the trace shift.
type Verdict struct {
	// File and Line are the line's; for a failure found at the end of
	// the script, the on line that armed its hook, or none.
	File string `json:",omitempty"`
	Line int    `json:",omitempty"`
	// Command is the line's command and arguments; for a hook, its
	// action.
	Command string
	Passed  bool
	// Kind is what failed (FailCommand for an assertion or a line);
	// "" when Passed.
	Kind FailureKind `json:",omitempty"`
	// Broken are the rules the failure names (Failure.Findings).
	Broken []BrokenRule `json:",omitempty"`
}

// BrokenRule is a rule a verdict names: which rule, about which object.
type BrokenRule struct {
	Object string // as the trace names it: deployments/web
	Rule   string // "stale object"
}

// Verdict is f as a verdict.
func (f Failure) Verdict() Verdict {
	v := Verdict{File: f.File, Line: f.Line, Command: f.Command, Kind: f.Kind}
	if v.File == "" && f.Hook != nil {
		v.File, v.Line = SplitPos(f.Hook.Armed)
	}
	for _, x := range f.Findings {
		v.Broken = append(v.Broken, BrokenRule{Object: x.Object, Rule: x.Rule})
	}
	return v
}

// held keeps the verdict of an assertion that held at pos.
func (sc *Scenario) held(pos, command string) {
	file, line := SplitPos(pos)
	sc.run.mu.Lock()
	defer sc.run.mu.Unlock()
	sc.run.verdicts = append(sc.run.verdicts, Verdict{File: file, Line: line, Command: command, Passed: true})
}

// stoppedOutside keeps, when the script has ended, the verdict of a
// command of testscript's own that stopped it: t, a RunFiles test, says
// that something stopped the script, and no command of racekit's did. Its
// line, where testscript stopped, is only in the log testscript writes
// after the script's end: RunFiles finds it there (stoppedAt).
func (sc *Scenario) stoppedOutside(t testscript.T) {
	st, ok := t.(interface{ Stopped() bool })
	sc.run.mu.Lock()
	defer sc.run.mu.Unlock()
	if !ok || !st.Stopped() || sc.run.stopped {
		return
	}
	sc.run.verdicts = append(sc.run.verdicts, Verdict{Kind: FailScript})
}

// stoppedAt gives vs' verdict of a command of testscript's own that
// stopped the script (stoppedOutside) the line lines says log names.
func stoppedAt(vs []Verdict, lines *scriptLines, log string) {
	for i, v := range vs {
		if v.Kind == FailScript && v.File == "" && lines != nil {
			if n := lines.stoppedAt(log); n > 0 {
				vs[i].File, vs[i].Line = lines.file, n
			}
		}
	}
}

// Verdicts returns the scenario's verdicts so far, in order.
func (sc *Scenario) Verdicts() []Verdict {
	sc.run.mu.Lock()
	defer sc.run.mu.Unlock()
	return append([]Verdict(nil), sc.run.verdicts...)
}

// Pos returns the verdict's file:line, with the file's base name, or ""
// when it has none.
func (v Verdict) Pos() string {
	if v.File == "" {
		return ""
	}
	return filepath.Base(v.File) + ":" + strconv.Itoa(v.Line)
}

// String renders the verdict in one line: "x.txtar:12 referee alice:
// FAIL (command) broke stale resourceVersion (webapps/web)".
func (v Verdict) String() string { return v.render(v.Command) }

// Key renders the verdict as runs that must agree compare it: as String,
// with the command's name alone, since its arguments may hold what
// differs from run to run by design ($WORK, a kubeconfig's path).
func (v Verdict) Key() string {
	name, _, _ := strings.Cut(v.Command, " ")
	return v.render(name)
}

func (v Verdict) render(command string) string {
	s := command
	if v.Kind == FailScript {
		s = "(a command of testscript's own)"
	}
	if p := v.Pos(); p != "" {
		s = p + " " + s
	}
	if v.Passed {
		return s + ": pass"
	}
	s += ": FAIL (" + string(v.Kind) + ")"
	if len(v.Broken) > 0 {
		var rs []string
		for _, b := range v.Broken {
			rs = append(rs, fmt.Sprintf("%s (%s)", b.Rule, b.Object))
		}
		s += " broke " + strings.Join(rs, ", ")
	}
	return s
}
