package harness

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"
)

// TestAssertionReads checks where assertions get the objects they check,
// against the real API server: from the trace when the server's last
// answer about the object is the object as stored, from a GET otherwise.
// Each case counts the harness's own calls beyond those of the same script
// without its assertions, and every assertion must hold, so a stale answer
// fails.
func TestAssertionReads(t *testing.T) {
	const base = "create webapp.yaml\nreconcile webapps/web\n"
	// After a 409, the trace cannot say what the object holds.
	const conflicted = base + `get alice deployments/web d
get alice webapps/web w
bump bob deployments/web
bump bob webapps/web
! update alice d
! update alice w
`
	tests := []struct {
		name      string
		script    string
		tail      string
		wantReads int
	}{
		{name: "answered by the trace", script: base, wantReads: 0, tail: `field deployments/web spec.replicas 1
field webapps/web status.replicas 1
! annotation deployments/web team
`},
		{name: "after a 409, each assertion reads", script: conflicted, wantReads: 3, tail: `field deployments/web spec.replicas 1
annotation deployments/web racekit.dev/bump=1
! annotation deployments/web team
`},
		{name: "two objects after a 409", script: conflicted, wantReads: 4, tail: `field deployments/web spec.replicas 1
field webapps/web spec.replicas 1
field deployments/web spec.replicas 1
condition webapps/web Ready True
`},
		{name: "a write in between, then the trace answers", script: conflicted, wantReads: 1, tail: `! annotation deployments/web team
annotate bob deployments/web team=blue
annotation deployments/web team=blue
`},
		{name: "a write in a hook in between", script: conflicted, wantReads: 1, tail: `field deployments/web spec.replicas 1
on after bob get webapps/web 1st: scale carol deployments/web 3
get bob webapps/web snap
field deployments/web spec.replicas 3
`},
	}
	own := func(t *testing.T, script string) int {
		t.Helper()
		var n int
		c, opts := withRef(t, webAppScript(t, "reads.txtar", script))
		opts.Done = func(sc *Scenario) { n, _ = sc.OwnRoundTrips() }
		res := RunFiles(context.Background(), c, opts)
		assert.Equal(t, len(res), 1)
		assert.Assert(t, res[0].Passed, "the script failed:\n%s", res[0].Log)
		return n
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, own(t, tc.script+tc.tail)-own(t, tc.script), tc.wantReads)
		})
	}
}
