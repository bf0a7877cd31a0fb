package match_test

import (
	"strings"
	"testing"

	"github.com/onsi/gomega/types"
	"gotest.tools/v3/assert"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/harness"
	"github.com/racekit/racekit/match"
)

// outcome builds the Result of a scenario called name that passed, or that
// failed with failures.
func outcome(name string, failures ...harness.Failure) racekit.Result {
	return racekit.Result{Result: harness.Result{Name: name, Passed: len(failures) == 0, Failures: failures,
		Log: "> field memcacheds/cache ...\nFAIL: testdata/" + name + ".txtar:9: ..."}}
}

// lostFinalizer is the tutorial's failure: the check of both finalizers saw
// the controller's alone.
var lostFinalizer = harness.Failure{Kind: harness.FailCommand, File: "testdata/finalizer_survives.txtar", Line: 19,
	Command: `field memcacheds/cache metadata.finalizers ["bob.example.com/finalizer","cache.example.com/finalizer"]`,
	Claim:   "memcacheds/cache metadata.finalizers", Want: `["bob.example.com/finalizer","cache.example.com/finalizer"]`,
	Got: `["cache.example.com/finalizer"]`, Message: "field memcacheds/cache metadata.finalizers: want ..., got ..."}

// explored is the Result of an exploration with one run that failed at
// lostFinalizer, one that passed, and one that was n/a.
func explored() racekit.Result {
	at := harness.Moment{Point: "before", Actor: "controller", Verb: "patch", Object: "memcacheds/cache", Occ: 1}
	r := outcome("explore_finalizer", lostFinalizer)
	r.Explored = &racekit.ExploreReport{Interleavings: []racekit.Interleaving{
		{Name: "before_1", Hooks: []harness.Hook{{Moment: at, Interferer: "patch bob"}}, Failures: []harness.Failure{lostFinalizer}},
		{Name: "after_1", Hooks: []harness.Hook{{Moment: harness.Moment{Point: "after", Actor: "controller", Verb: "patch", Object: "memcacheds/cache", Occ: 1}, Interferer: "patch bob"}}, Passed: true},
		{Name: "na", NotApplicable: true},
	}}
	return r
}

// TestMatchers plays each matcher against outcomes that it must accept and
// outcomes that it must refuse, with the refusal's message.
func TestMatchers(t *testing.T) {
	pass := outcome("finalizer_survives")
	fail := outcome("finalizer_survives", lostFinalizer)
	withHeader := func(r racekit.Result, w racekit.Want) racekit.Result {
		r.Want = &w
		return r
	}
	findsIt := racekit.WantRun{Moment: "before controller patch memcacheds/cache 1st", Interferer: "patch bob",
		Fails: racekit.FailsAt("field memcacheds/cache metadata.finalizers")}
	for _, tc := range []struct {
		name    string
		matcher types.GomegaMatcher
		actual  any
		want    bool
		message string // part of the failure message when want is false
	}{
		{"pass on a pass", match.Pass(), pass, true, ""},
		{"pass on a pointer", match.Pass(), &pass, true, ""},
		{"pass on a failure", match.Pass(), fail, false, "finalizer_survives failed, want it to pass"},
		{"fail at on its failure", match.FailAt("field memcacheds/cache metadata.finalizers"), fail, true, ""},
		{"fail at the whole line", match.FailAt(lostFinalizer.Command), fail, true, ""},
		{"fail at another line", match.FailAt("field memcacheds/cache spec.size"), fail, false, "failed, but not as it should"},
		{"fail at on a pass", match.FailAt("field memcacheds/cache metadata.finalizers"), pass, false, "finalizer_survives passed, want it to fail at field"},
		{"saw what it saw", match.FailAt("field memcacheds/cache metadata.finalizers").Saw(`["cache.example.com/finalizer"]`), fail, true, ""},
		{"saw something else", match.FailAt("field memcacheds/cache metadata.finalizers").Saw(racekit.NotFound), fail, false, "saw <not found>"},
		{"findings as found", match.HaveFindings(findsIt), explored(), true, ""},
		{"findings missing one", match.HaveFindings(), explored(), false, "the run at before controller patch memcacheds/cache 1st with patch bob failed, and no want names it"},
		{"findings at another moment", match.HaveFindings(racekit.WantRun{Moment: "after controller patch memcacheds/cache 1st", Interferer: "patch bob", Fails: findsIt.Fails}),
			explored(), false, "the run at after controller patch memcacheds/cache 1st with patch bob did not fail"},
		{"findings of no exploration", match.HaveFindings(findsIt), fail, false, "explored nothing"},
		{"as wanted: pass", match.AsWanted(), withHeader(pass, racekit.Passes()), true, ""},
		{"as wanted: a failure wanted", match.AsWanted(), withHeader(fail, racekit.FailsAt("field memcacheds/cache")), true, ""},
		{"as wanted: a pass that should fail", match.AsWanted(), withHeader(pass, racekit.FailsAt("field memcacheds/cache")), false, "passed, want it to fail at field memcacheds/cache"},
		{"as wanted with no header", match.AsWanted(), pass, false, "its header says nothing of what it must do"},
		{"a want of a table", match.Want(racekit.FailsAt("field")), fail, true, ""},
		{"a want of a table, refused", match.Want(racekit.Passes()), fail, false, "want it to pass"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.matcher.Match(tc.actual)
			assert.NilError(t, err)
			assert.Equal(t, got, tc.want)
			if tc.want {
				assert.Assert(t, strings.Contains(tc.matcher.NegatedFailureMessage(tc.actual), "want it not to"))
				return
			}
			msg := tc.matcher.FailureMessage(tc.actual)
			assert.Assert(t, strings.Contains(msg, tc.message), "message:\n%s", msg)
			assert.Assert(t, strings.Contains(msg, "--- timeline of "), "message:\n%s", msg)
		})
	}
}

// TestMatchersRefuseOtherValues: an actual that is not a Result is an
// error of the match, not a mismatch, so Gomega reports the mistake.
func TestMatchersRefuseOtherValues(t *testing.T) {
	var nilResult *racekit.Result
	for _, actual := range []any{nil, "finalizer_survives", nilResult, []racekit.Result{}} {
		for _, m := range []types.GomegaMatcher{match.Pass(), match.FailAt("field"), match.HaveFindings(), match.AsWanted()} {
			_, err := m.Match(actual)
			assert.ErrorContains(t, err, "want the racekit.Result of Env.Play")
			assert.Assert(t, strings.Contains(m.FailureMessage(actual), "want the racekit.Result of Env.Play"))
		}
	}
}
