package harness

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/language"
	refrules "github.com/racekit/racekit/harness/referee"
)

// ruleStaleRV is the rule's name, as the referee names it.
const ruleStaleRV = refrules.RuleStaleRV

// TestVerdictsOfARun runs scenarios as CheckNoise does, going on past the
// assertions that fail: each assertion gives its verdict, with the rules
// its failure names as values, and a line that is no assertion stops the
// script at its failure, which is the last verdict; a command of
// testscript's own that fails is one too. The rules a failure names are
// the values its error carried, rendered as its message renders them.
func TestVerdictsOfARun(t *testing.T) {
	c, opts := withRef(t)
	lo, err := opts.Language()
	assert.NilError(t, err)
	lo.Extensions = append(lo.Extensions, &language.Extension{Name: "keep going", KeepGoing: true})
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
	lo.Files = []string{file}
	res := language.RunFiles(context.Background(), c, lo)
	assert.Equal(t, len(res), 1)
	var got []string
	for _, v := range res[0].Verdicts {
		got = append(got, v.Key())
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
	var referee language.Failure
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
	lo.Files = []string{script}
	res = language.RunFiles(context.Background(), c, lo)
	assert.Equal(t, len(res), 1)
	assert.DeepEqual(t, rendered(res[0].Verdicts), []string{"script.txtar:2 (a command of testscript's own): FAIL (script)"})
}

// rendered renders verdicts one a line, as runs that must agree compare
// them.
func rendered(vs []language.Verdict) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Key()
	}
	return out
}
