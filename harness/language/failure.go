package language

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/racekit/racekit/harness/referee"
)

// FailureKind says what failed: a line's command, a hook's action, a hook
// that never fired, or what still ran when the script ended.
type FailureKind string

// The kinds of failure a scenario reports.
const (
	// FailCommand is a line whose command returned an error: an
	// assertion that does not hold, a workload that failed.
	FailCommand FailureKind = "command"
	// FailHookAction is a hook whose action returned an error.
	FailHookAction FailureKind = "hook-action"
	// FailUnfired is a hook that was armed and never fired.
	FailUnfired FailureKind = "unfired"
	// FailHalted is a running controller or process that, at the end of
	// the script, would not stop or had ended with an error.
	FailHalted FailureKind = "halted"
	// FailView is a hold of what an actor is shown that failed when the
	// actor met it (a list as of a compacted resourceVersion), or that
	// nothing met by the end of the script: File and Line are the hold's.
	FailView FailureKind = "view"
)

// Failure is one thing that went wrong in a scenario's run, as data: made
// once, where it happens (adapt for a line's command and the hook actions
// that failed during it, Params for the end-of-script checks), and rendered
// by whoever shows it. The log's FAIL lines are Text's rendering; explore
// and whatever else judges a run read these values, never the log.
//
// Result.Failures holds a run's failures in the order the log shows them.
// A testscript command of its own (exec, cmp, ...) that fails is only in
// the log: racekit does not see it fail.
type Failure struct {
	Kind FailureKind
	// File and Line are where the failure was reported: the line whose
	// command failed, or that was running when a hook's action failed;
	// empty and 0 when it was reported at the end of the script.
	File string `json:",omitempty"`
	Line int    `json:",omitempty"`
	// Command is the failing line's command and arguments
	// ("field deployments/web spec.replicas 2"); for a hook, its action.
	Command string `json:",omitempty"`
	// Message is what went wrong; it may span lines (a diff, the trace's
	// tail).
	Message string
	// Claim, Want and Got are, for an assertion whose claim does not
	// hold (Mismatch), what it is about, what it wanted and what it saw,
	// as the scenario writes values: "statefulsets/r-server spec.replicas",
	// "3", "2". They are empty for any other failure.
	Claim string `json:",omitempty"`
	Want  string `json:",omitempty"`
	Got   string `json:",omitempty"`
	// Findings are the rules the failure names broken, once per object
	// and rule, as the command's error carried them (NamingRules); Rules
	// renders each as the message does after "rule broken: ".
	Findings []referee.Finding `json:",omitempty"`
	Rules    []string          `json:",omitempty"`
	// Hook is the hook of a hook-action or unfired failure.
	Hook *FailedHook `json:",omitempty"`
	// Usage is set when the line's own arguments were wrong (a Usage error),
	// not a claim or a call: a failing twin must fail on a claim.
	Usage bool `json:",omitempty"`
	// Unavailable is set when the line could not have what the run needs
	// from outside it (ErrUnavailable): a fixed port another process held
	// past the wait. The run could not start as the scenario says.
	Unavailable bool `json:",omitempty"`
	// Settled is set when the line was a wait that Options.EndWaitsOnSettle
	// ended as everything that runs settled without what it waited for
	// (ErrSettled): a wait cut short, not a claim that does not hold.
	Settled bool `json:",omitempty"`
	// Tolerated is set on a hook's action that failed and that an
	// extension let the run go on from (Extension.Tolerate): the run
	// reports it and goes on, and no verdict counts it.
	Tolerated bool `json:",omitempty"`
}

// FailedHook names the hook of a failure.
type FailedHook struct {
	ID int
	// Trigger is the hook's left side: "after controller get deployments/web 1st".
	Trigger string
	// Armed is the file:line of the on line that armed it.
	Armed string
}

// Pos returns the failure's file:line, with the file's base name, or ""
// when it was reported at the end of the script.
func (f Failure) Pos() string {
	if f.File == "" {
		return ""
	}
	return filepath.Base(f.File) + ":" + strconv.Itoa(f.Line)
}

// Text renders the failure as the log shows it after "FAIL: " and the
// file:line testscript puts first.
func (f Failure) Text() string {
	switch f.Kind {
	case FailHookAction:
		return fmt.Sprintf("hook %d (%s), armed at %s, failed: %s", f.Hook.ID, f.Hook.Trigger, f.Hook.Armed, f.Message)
	case FailUnfired:
		return fmt.Sprintf("%s: hook %d (%s: %s) never fired: %s", f.Hook.Armed, f.Hook.ID, f.Hook.Trigger, f.Command, f.Message)
	case FailHalted:
		return f.Message
	case FailView:
		return f.Pos() + ": " + f.Command + ": " + f.Message
	}
	return f.Command + ": " + f.Message
}

// Summary renders the failure in one line, as explore's table shows it:
// where, with the file's base name, and the first line of Text; then a
// "rule broken: RULE" line for each rule.
func (f Failure) Summary() string {
	short := f
	if f.Hook != nil {
		h := *f.Hook
		if file, line := SplitPos(h.Armed); line > 0 {
			h.Armed = filepath.Base(file) + ":" + strconv.Itoa(line)
		}
		short.Hook = &h
	}
	first, _, _ := strings.Cut(short.Text(), "\n")
	if p := f.Pos(); p != "" && f.Kind != FailView { // a view's Text starts with it
		first = p + ": " + first
	}
	out := []string{first}
	for _, r := range f.Rules {
		out = append(out, "rule broken: "+r)
	}
	return strings.Join(out, "\n")
}

// record keeps fs among the scenario's failures, for Result.Failures, and
// among its verdicts, but for those an extension tolerated (Tolerated).
func (sc *Scenario) record(fs ...Failure) {
	sc.run.mu.Lock()
	defer sc.run.mu.Unlock()
	sc.run.failures = append(sc.run.failures, fs...)
	for _, f := range fs {
		if !f.Tolerated {
			sc.run.verdicts = append(sc.run.verdicts, f.Verdict())
		}
	}
}

// Failures returns what went wrong in the scenario so far, in order.
func (sc *Scenario) Failures() []Failure {
	sc.run.mu.Lock()
	defer sc.run.mu.Unlock()
	return append([]Failure(nil), sc.run.failures...)
}

// SplitPos splits a file:line into its parts; line is 0 when pos has none.
func SplitPos(pos string) (string, int) {
	i := strings.LastIndex(pos, ":")
	if i < 0 {
		return pos, 0
	}
	n, err := strconv.Atoi(pos[i+1:])
	if err != nil {
		return pos, 0
	}
	return pos[:i], n
}

// tolerate reports whether an extension lets the run go on from f, a
// hook's action that failed (Extension.Tolerate): the run reports it,
// through log, with the extension's reason, and keeps f, marked
// Tolerated, among the scenario's failures.
func (sc *Scenario) tolerate(f Failure, log func(string)) bool {
	if f.Kind != FailHookAction || f.Hook == nil {
		return false
	}
	for _, e := range sc.run.opts.Extensions {
		if e.Tolerate == nil {
			continue
		}
		if why, ok := e.Tolerate(sc, f); ok {
			f.Tolerated = true
			sc.record(f)
			log(f.Text() + " (" + why + ")")
			return true
		}
	}
	return false
}

// endFailures returns what went wrong that the end of the script finds:
// ended, what the extensions' End found (a controller that would not
// halt); the hook actions not reported yet, but for those an extension
// tolerates (tolerate, through log); and the hooks that never fired. It keeps them
// among the scenario's failures.
func (sc *Scenario) endFailures(ended []Failure, log func(...any)) []Failure {
	fs := append([]Failure(nil), ended...)
	for _, f := range sc.hookErrors() {
		if !sc.tolerate(f, func(s string) { log(s) }) {
			fs = append(fs, f)
		}
	}
	fs = append(fs, sc.unfired()...)
	sc.record(fs...)
	return fs
}

// goesOn ends the FAIL line of an assertion after which the script goes
// on (Extension.KeepGoing).
const goesOn = " (an assertion: the script goes on)"
