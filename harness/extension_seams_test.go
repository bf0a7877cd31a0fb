package harness

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
)

// TestExtensionsChangeTheRun checks the seams through which a layer that
// runs a script to judge it (explore, the self-checks) changes the run's
// course, each against the same script without it: Tolerate lets the run
// go on from a hook's action that failed, which stays a failure, marked
// Tolerated, but no verdict; KeepGoing goes on past an assertion that does
// not hold; ReadServer reads an object the trace knows with a GET;
// ShowTrace is what the trace command prints.
func TestExtensionsChangeTheRun(t *testing.T) {
	c, opts := withRef(t)
	lo, err := opts.Language()
	assert.NilError(t, err)
	file := webAppScript(t, "seams.txtar", `create webapp.yaml
on after alice get webapps/web: bump bob webapps/nope
get alice webapps/web snap
field webapps/web spec.replicas 2
field webapps/web spec.replicas 1
trace
stdout 'alice +get'
`)
	type outcome struct {
		Passed   bool
		Failures []string // kind, tolerated
		Verdicts []string
		OwnGets  bool // the harness read an object from the API server
		// Noted is set when the log says why the run went on; testscript
		// keeps the log of a script that stops, and drops that of one
		// that reaches its end.
		Noted bool
	}
	run := func(t *testing.T, ext *language.Extension) outcome {
		o := lo
		if ext != nil {
			o.Extensions = append(append([]*language.Extension(nil), lo.Extensions...), ext)
		}
		o.Files = []string{file}
		var own int
		o.Done = func(sc *language.Scenario) { own, _ = sc.OwnRoundTrips() }
		res := language.RunFiles(context.Background(), c, o)
		assert.Equal(t, len(res), 1)
		out := outcome{Passed: res[0].Passed, Verdicts: rendered(res[0].Verdicts), OwnGets: own > 1, Noted: strings.Contains(res[0].Log, "(tolerated by the test)")}
		for _, f := range res[0].Failures {
			s := string(f.Kind)
			if f.Tolerated {
				s += ", tolerated"
			}
			out.Failures = append(out.Failures, s)
		}
		return out
	}
	tolerate := func(_ *language.Scenario, f language.Failure) (string, bool) {
		return "tolerated by the test", strings.HasSuffix(f.Hook.Armed, ":2")
	}
	plain := outcome{Failures: []string{"hook-action"}, Verdicts: []string{"seams.txtar:3 bump: FAIL (hook-action)"}}
	tests := []struct {
		name string
		ext  *language.Extension
		want outcome
	}{
		{"none", nil, plain},
		{"Tolerate", &language.Extension{Name: "t", Tolerate: tolerate}, outcome{Failures: []string{"hook-action, tolerated", "command"},
			Verdicts: []string{"seams.txtar:4 field: FAIL (command)"}, Noted: true}},
		{"Tolerate and KeepGoing", &language.Extension{Name: "t", Tolerate: tolerate, KeepGoing: true}, outcome{Failures: []string{"hook-action, tolerated", "command"},
			Verdicts: []string{"seams.txtar:4 field: FAIL (command)", "seams.txtar:5 field: pass", "seams.txtar:6 trace: pass"}}},
		{"Tolerate, KeepGoing and ReadServer", &language.Extension{Name: "t", Tolerate: tolerate, KeepGoing: true, ReadServer: true}, outcome{Failures: []string{"hook-action, tolerated", "command"},
			Verdicts: []string{"seams.txtar:4 field: FAIL (command)", "seams.txtar:5 field: pass", "seams.txtar:6 trace: pass"}, OwnGets: true}},
		{"Tolerate, KeepGoing and ShowTrace", &language.Extension{Name: "t", Tolerate: tolerate, KeepGoing: true, ShowTrace: func(record.Trace) record.Trace { return nil }},
			outcome{Failures: []string{"hook-action, tolerated", "command"},
				Verdicts: []string{"seams.txtar:4 field: FAIL (command)", "seams.txtar:5 field: pass", "seams.txtar:6 trace: pass", "seams.txtar:7 (a command of testscript's own): FAIL (script)"}, Noted: true}},
		{"KeepGoing alone", &language.Extension{Name: "t", KeepGoing: true}, plain},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := run(t, tc.ext)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}
