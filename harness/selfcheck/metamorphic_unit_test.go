package selfcheck

import (
	"strings"
	"testing"

	"github.com/racekit/racekit/harness/referee"

	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/language"

	"gotest.tools/v3/assert"
)

// TestLineDiff checks how two runs' verdicts are shown when they differ.
func TestLineDiff(t *testing.T) {
	tests := []struct {
		name string
		a, b []string
		want string
	}{
		{"the same", []string{"x", "y"}, []string{"x", "y"}, ""},
		{"one changed", []string{"x", "y", "z"}, []string{"x", "Y", "z"}, "    x\n  - y\n  + Y\n    z\n"},
		{"one more", []string{"x"}, []string{"x", "y"}, "    x\n  + y\n"},
		{"one less", []string{"x", "y"}, []string{"y"}, "  - x\n    y\n"},
		{"none", nil, []string{"x"}, "  + x\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, lineDiff(tc.a, tc.b), tc.want)
		})
	}
}

// TestVerdictRendering checks what runs compare of a verdict: where, the
// command's name, pass or the kind of failure, and the rules by object and
// rule; and what a reader sees besides (the whole command).
func TestVerdictRendering(t *testing.T) {
	f := language.Failure{Kind: language.FailCommand, File: "/tmp/x/a.txtar", Line: 12, Command: "referee alice", Message: "alice broke the rules: #7 ...",
		Findings: []referee.Finding{{Object: "webapps/web", Rule: referee.RuleStaleRV, Text: "#7 update webapps/web sent rv1"}}}
	v := f.Verdict()
	assert.Equal(t, v.String(), "a.txtar:12 referee alice: FAIL (command) broke stale resourceVersion (webapps/web)")
	assert.Equal(t, v.Key(), "a.txtar:12 referee: FAIL (command) broke stale resourceVersion (webapps/web)")
	unfired := language.Failure{Kind: language.FailUnfired, Command: "annotate bob deployments/web team=blue", Hook: &language.FailedHook{ID: 1, Trigger: "after controller get deployments/web 1st", Armed: "/tmp/x/a.txtar:5"}}
	assert.Equal(t, unfired.Verdict().Key(), "a.txtar:5 annotate: FAIL (unfired)")
	assert.Equal(t, language.Verdict{File: "a.txtar", Line: 3, Command: "field deployments/web spec.replicas 2", Passed: true}.Key(), "a.txtar:3 field: pass")
	assert.Equal(t, language.Verdict{File: "a.txtar", Line: 9, Kind: language.FailScript}.Key(), "a.txtar:9 (a command of testscript's own): FAIL (script)")
	assert.DeepEqual(t, rendered([]language.Verdict{{File: "a.txtar", Line: 0, Command: "apply noise racekit-noise.yaml", Kind: language.FailCommand}}),
		[]string{"(a line of the noise) apply: FAIL (command)"})
}

// TestExploreDifferences checks how two explorations are compared: a run
// at a moment the other left out has the verdict of the moment explored
// instead, in both directions; a verdict that differs, a run without a
// twin and moments that differ are each a difference.
func TestExploreDifferences(t *testing.T) {
	m := func(point, verb string) explore.Moment {
		return explore.Moment{Point: point, Actor: "controller", Verb: verb, Object: "deployments/web", Occ: 1}
	}
	getAfter, updateBefore, updateAfter := m("after", "get"), m("before", "update"), m("after", "update")
	run := func(at explore.Moment, passed bool, line int) explore.Interleaving {
		il := explore.Interleaving{Hooks: []explore.Hook{{Moment: at, Interferer: "annotate bob deployments/web team=blue"}}, Passed: passed}
		if !passed {
			il.Failures = []language.Failure{{Kind: language.FailCommand, File: "a.txtar", Line: line, Command: "annotation deployments/web team=blue"}}
		}
		return il
	}
	pruned := &explore.Report{Moments: []explore.Moment{getAfter, updateAfter}, LeftOut: []explore.Equivalence{{Moment: updateBefore, Twin: getAfter}},
		Interleavings: []explore.Interleaving{run(getAfter, false, 9), run(updateAfter, true, 0)}}
	whole := func(before bool) *explore.Report {
		return &explore.Report{Moments: []explore.Moment{getAfter, updateBefore, updateAfter},
			Interleavings: []explore.Interleaving{run(getAfter, false, 19), run(updateBefore, before, 19), run(updateAfter, true, 0)}}
	}
	// The noisy script's line 19 is the original's 9.
	noisy := func(n int) int {
		if n == 19 {
			return 9
		}
		return n
	}
	same := func(n int) int { return n }
	t.Run("twins agree", func(t *testing.T) {
		got := exploreDifferences(judged{explored: pruned, line: same}, judged{explored: whole(false), line: noisy})
		assert.DeepEqual(t, got, []string(nil))
	})
	t.Run("a moment left out fails where its twin passed", func(t *testing.T) {
		p := &explore.Report{Moments: pruned.Moments, LeftOut: pruned.LeftOut, Interleavings: []explore.Interleaving{run(getAfter, true, 0), run(updateAfter, true, 0)}}
		got := exploreDifferences(judged{explored: p, line: same}, judged{explored: whole(false), line: noisy})
		assert.Assert(t, len(got) == 4, "%s", strings.Join(got, "\n"))
		assert.Equal(t, got[0], "the changed run at after controller get deployments/web 1st | annotate bob deployments/web team=blue: a.txtar:9 annotation: FAIL (command); its twin in the plain exploration, at after controller get deployments/web 1st | annotate bob deployments/web team=blue: pass")
		assert.Equal(t, got[1], "the changed run at before controller update deployments/web 1st | annotate bob deployments/web team=blue: a.txtar:9 annotation: FAIL (command); its twin in the plain exploration, at after controller get deployments/web 1st | annotate bob deployments/web team=blue: pass")
		assert.Equal(t, got[2], "the plain run at after controller get deployments/web 1st | annotate bob deployments/web team=blue: pass; its twin in the changed exploration, at after controller get deployments/web 1st | annotate bob deployments/web team=blue: a.txtar:9 annotation: FAIL (command)")
		assert.Assert(t, strings.HasPrefix(got[3], "plain:\nexplored"), got[3])
	})
	t.Run("a run without a twin", func(t *testing.T) {
		p := &explore.Report{Moments: pruned.Moments, LeftOut: pruned.LeftOut, Interleavings: pruned.Interleavings[:1]}
		got := exploreDifferences(judged{explored: p, line: same}, judged{explored: whole(false), line: noisy})
		assert.Assert(t, len(got) == 2, "%s", strings.Join(got, "\n"))
		assert.Equal(t, got[0], "the changed run at after controller update deployments/web 1st | annotate bob deployments/web team=blue has no twin in the plain exploration")
	})
	t.Run("other moments", func(t *testing.T) {
		w := whole(false)
		w.Moments = w.Moments[:2]
		w.Interleavings = w.Interleavings[:2]
		got := exploreDifferences(judged{explored: pruned, line: same}, judged{explored: w, line: noisy})
		assert.Assert(t, strings.HasPrefix(got[0], "the workload's moments differ:"), "%s", strings.Join(got, "\n"))
	})
}
