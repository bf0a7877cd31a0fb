// Package match holds Gomega matchers of racekit's outcomes, for a Ginkgo
// suite that plays scenarios with racekit.Start and Env.Play:
//
//	Expect(env.Play("finalizer_survives")).To(match.Pass())
//	Expect(env.Play("finalizer_survives")).To(match.FailAt(`field memcacheds/cache metadata.finalizers`))
//	Expect(env.Play("explore_finalizer")).To(match.HaveFindings(racekit.WantRun{...}))
//	Expect(env.Play(name)).To(match.AsWanted()) // the scenario's # want: header
//
// Each matcher is racekit.Result.Check of a racekit.Want, so a Gomega suite
// and a plain go test (racekit.Expect) judge an outcome alike; it lives in a
// package of its own so that a plain go test user never imports Gomega. A
// failure's message gives what the scenario did instead, its failures with
// file:line, and its timeline.
package match

import (
	"fmt"

	"github.com/onsi/gomega/types"

	"github.com/racekit/racekit"
)

// Pass succeeds when the scenario passed; for an exploration, when no run
// failed and the scenario passed.
func Pass() types.GomegaMatcher { return &outcome{want: racekit.Passes()} }

// FailAt succeeds when the scenario failed at the assertion command, given
// with its arguments as the command sees them, or the first of them
// (racekit.FailsAt). Saw adds the value the failed claim must have seen.
func FailAt(command string) *Failing {
	return &Failing{outcome{want: racekit.FailsAt(command)}}
}

// Failing is FailAt's matcher.
type Failing struct{ outcome }

// Saw returns the matcher requiring too that the failed claim saw got
// (racekit.Want.Saw; racekit.NotFound when its object was gone).
func (f *Failing) Saw(got string) *Failing {
	return &Failing{outcome{want: f.want.Saw(got)}}
}

// HaveFindings succeeds when an exploration failed in exactly the runs
// given, each where it says (racekit.Finds); runs that are n/a do not
// count.
func HaveFindings(runs ...racekit.WantRun) types.GomegaMatcher {
	return &outcome{want: racekit.Finds(runs...)}
}

// AsWanted succeeds when the scenario did what its file's header says it
// must (# want: pass, or # want: fail at COMMAND); a scenario whose header
// says nothing fails the match, saying so.
func AsWanted() types.GomegaMatcher { return &outcome{header: true} }

// Want succeeds when the scenario did what w says: the matcher of any
// racekit.Want, such as one a table of a test holds.
func Want(w racekit.Want) types.GomegaMatcher { return &outcome{want: w} }

// outcome matches a racekit.Result against a want, or against its own
// header's.
type outcome struct {
	want   racekit.Want
	header bool
	// err is why the last Match did not hold; the messages give it.
	err error
}

// result reads actual as a Result, which Env.Play returns.
func result(actual any) (racekit.Result, error) {
	switch r := actual.(type) {
	case racekit.Result:
		return r, nil
	case *racekit.Result:
		if r != nil {
			return *r, nil
		}
	}
	return racekit.Result{}, fmt.Errorf("match: want the racekit.Result of Env.Play, got %T", actual)
}

// Match reports whether actual, a racekit.Result, did what the want says.
// An actual of another type is an error, not a mismatch.
func (o *outcome) Match(actual any) (bool, error) {
	r, err := result(actual)
	if err != nil {
		return false, err
	}
	w := o.want
	if o.header {
		if r.Want == nil {
			o.err = fmt.Errorf("%s: its header says nothing of what it must do: add a # want: line before its first command", r.Name)
			return false, nil
		}
		w = *r.Want
	}
	o.err = r.Check(w)
	return o.err == nil, nil
}

// FailureMessage says how the scenario did not do what was wanted, with
// its timeline.
func (o *outcome) FailureMessage(actual any) string {
	r, err := result(actual)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%v\n--- timeline of %s\n%s", o.err, r.Name, r.Timeline())
}

// NegatedFailureMessage says that the scenario did what it was wanted not
// to.
func (o *outcome) NegatedFailureMessage(actual any) string {
	r, err := result(actual)
	if err != nil {
		return err.Error()
	}
	w := o.want
	if o.header && r.Want != nil {
		w = *r.Want
	}
	return fmt.Sprintf("%s did %s, want it not to\n--- timeline of %s\n%s", r.Name, w, r.Name, r.Timeline())
}
