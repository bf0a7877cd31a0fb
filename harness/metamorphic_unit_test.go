package harness

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	f := Failure{Kind: FailCommand, File: "/tmp/x/a.txtar", Line: 12, Command: "referee alice", Message: "alice broke the rules: #7 ...",
		Findings: []Finding{{Object: "webapps/web", Rule: ruleStaleRV, Text: "#7 update webapps/web sent rv1"}}}
	v := f.verdict()
	assert.Equal(t, v.String(), "a.txtar:12 referee alice: FAIL (command) broke stale resourceVersion (webapps/web)")
	assert.Equal(t, v.key(), "a.txtar:12 referee: FAIL (command) broke stale resourceVersion (webapps/web)")
	unfired := Failure{Kind: FailUnfired, Command: "annotate bob deployments/web team=blue", Hook: &FailedHook{ID: 1, Trigger: "after controller get deployments/web 1st", Armed: "/tmp/x/a.txtar:5"}}
	assert.Equal(t, unfired.verdict().key(), "a.txtar:5 annotate: FAIL (unfired)")
	assert.Equal(t, Verdict{File: "a.txtar", Line: 3, Command: "field deployments/web spec.replicas 2", Passed: true}.key(), "a.txtar:3 field: pass")
	assert.Equal(t, Verdict{File: "a.txtar", Line: 9, Kind: FailScript}.key(), "a.txtar:9 (a command of testscript's own): FAIL (script)")
	assert.DeepEqual(t, rendered([]Verdict{{File: "a.txtar", Line: 0, Command: "apply noise racekit-noise.yaml", Kind: FailCommand}}),
		[]string{"(a line of the noise) apply: FAIL (command)"})
}

// TestExploreDifferences checks how two explorations are compared: a run
// at a moment the other left out has the verdict of the moment explored
// instead, in both directions; a verdict that differs, a run without a
// twin and moments that differ are each a difference.
func TestExploreDifferences(t *testing.T) {
	m := func(point, verb string) Moment {
		return Moment{Point: point, Actor: "controller", Verb: verb, Object: "deployments/web", Occ: 1}
	}
	getAfter, updateBefore, updateAfter := m("after", "get"), m("before", "update"), m("after", "update")
	run := func(at Moment, passed bool, line int) Interleaving {
		il := Interleaving{Hooks: []Hook{{Moment: at, Interferer: "annotate bob deployments/web team=blue"}}, Passed: passed}
		if !passed {
			il.Failures = []Failure{{Kind: FailCommand, File: "a.txtar", Line: line, Command: "annotation deployments/web team=blue"}}
		}
		return il
	}
	pruned := &ExploreReport{Moments: []Moment{getAfter, updateAfter}, LeftOut: []Equivalence{{Moment: updateBefore, Twin: getAfter}},
		Interleavings: []Interleaving{run(getAfter, false, 9), run(updateAfter, true, 0)}}
	whole := func(before bool) *ExploreReport {
		return &ExploreReport{Moments: []Moment{getAfter, updateBefore, updateAfter},
			Interleavings: []Interleaving{run(getAfter, false, 19), run(updateBefore, before, 19), run(updateAfter, true, 0)}}
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
		p := &ExploreReport{Moments: pruned.Moments, LeftOut: pruned.LeftOut, Interleavings: []Interleaving{run(getAfter, true, 0), run(updateAfter, true, 0)}}
		got := exploreDifferences(judged{explored: p, line: same}, judged{explored: whole(false), line: noisy})
		assert.Assert(t, len(got) == 4, "%s", strings.Join(got, "\n"))
		assert.Equal(t, got[0], "the changed run at after controller get deployments/web 1st | annotate bob deployments/web team=blue: a.txtar:9 annotation: FAIL (command); its twin in the plain exploration, at after controller get deployments/web 1st | annotate bob deployments/web team=blue: pass")
		assert.Equal(t, got[1], "the changed run at before controller update deployments/web 1st | annotate bob deployments/web team=blue: a.txtar:9 annotation: FAIL (command); its twin in the plain exploration, at after controller get deployments/web 1st | annotate bob deployments/web team=blue: pass")
		assert.Equal(t, got[2], "the plain run at after controller get deployments/web 1st | annotate bob deployments/web team=blue: pass; its twin in the changed exploration, at after controller get deployments/web 1st | annotate bob deployments/web team=blue: a.txtar:9 annotation: FAIL (command)")
		assert.Assert(t, strings.HasPrefix(got[3], "plain:\nexplored"), got[3])
	})
	t.Run("a run without a twin", func(t *testing.T) {
		p := &ExploreReport{Moments: pruned.Moments, LeftOut: pruned.LeftOut, Interleavings: pruned.Interleavings[:1]}
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

// TestVerdictsOfARun runs scenarios as CheckNoise does, going on past the
// assertions that fail: each assertion gives its verdict, with the rules
// its failure names as values, and a line that is no assertion stops the
// script at its failure, which is the last verdict; a command of
// testscript's own that fails is one too. The rules a failure names are
// the values its error carried, rendered as its message renders them.
func TestVerdictsOfARun(t *testing.T) {
	c, opts := withRef(t)
	opts.keepGoing = true
	file := webAppScript(t, "verdicts.txtar", `create webapp.yaml
get alice webapps/web old
bump bob webapps/web
get alice webapps/web snap
bump bob webapps/web
! update alice snap
field webapps/web spec.replicas 2
! update alice old
referee alice
field webapps/web spec.replicas 1
update alice snap
field webapps/web spec.replicas 1
`)
	res := RunFiles(context.Background(), c, ScriptOptions{Files: []string{file}, Controllers: opts.Controllers, Commands: opts.Commands, keepGoing: true})
	assert.Equal(t, len(res), 1)
	var got []string
	for _, v := range res[0].Verdicts {
		got = append(got, v.key())
	}
	want := []string{
		"verdicts.txtar:7 field: FAIL (command)",
		"verdicts.txtar:9 referee: FAIL (command) broke stale resourceVersion (webapps/web)",
		"verdicts.txtar:10 field: pass",
		"verdicts.txtar:11 update: FAIL (command)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("verdicts (-want +got):\n%s\n%s", diff, res[0].Log)
	}
	assert.Assert(t, !res[0].Passed)
	var referee Failure
	for _, f := range res[0].Failures {
		if strings.HasPrefix(f.Command, "referee") {
			referee = f
		}
	}
	// The rules as the message renders them, after "rule broken: ".
	var lines []string
	for _, l := range strings.Split(referee.Message, "\n") {
		if r, ok := strings.CutPrefix(strings.TrimSpace(l), "rule broken: "); ok {
			lines = append(lines, r)
		}
	}
	assert.Assert(t, len(lines) == 1, referee.Message)
	assert.DeepEqual(t, referee.Rules, lines)
	assert.Equal(t, referee.Findings[0].Rule, ruleStaleRV)

	script := webAppScript(t, "script.txtar", "create webapp.yaml\nstdout 'nothing printed this'\nfield webapps/web spec.replicas 1\n")
	res = RunFiles(context.Background(), c, ScriptOptions{Files: []string{script}, Controllers: opts.Controllers, keepGoing: true})
	assert.Equal(t, len(res), 1)
	assert.DeepEqual(t, rendered(res[0].Verdicts), []string{"script.txtar:2 (a command of testscript's own): FAIL (script)"})
}
