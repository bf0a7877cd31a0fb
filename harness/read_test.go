package harness

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// TestAssertionReads checks where assertions get the objects they check,
// against the real API server: from the trace when the server's last
// answer about the object is the object as stored, from a GET otherwise,
// and that a run of assertions shares that GET. Each case counts the
// harness's own calls beyond those of the same script without its
// assertions, and every assertion must hold, so a stale answer fails.
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
		{name: "a run of assertions shares a GET", script: conflicted, wantReads: 1, tail: `field deployments/web spec.replicas 1
annotation deployments/web racekit.dev/bump=1
! annotation deployments/web team
`},
		{name: "two objects, interleaved", script: conflicted, wantReads: 2, tail: `field deployments/web spec.replicas 1
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
		res := RunFiles(context.Background(), controlPlane(t), ScriptOptions{
			Files: []string{webAppScript(t, "reads.txtar", script)},
			Done:  func(sc *Scenario) { n, _ = sc.OwnRoundTrips() },
		})
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

// TestReadAfterActorCall checks the recorder's side of a shared GET:
// within one command, a GET followed by an actor's request is not reused,
// because the request may have changed the object, even when the trace
// cannot say what it changed to.
func TestReadAfterActorCall(t *testing.T) {
	ctx := context.Background()
	sc, err := NewScenario(ctx, controlPlane(t), "read-after-call", t.TempDir())
	assert.NilError(t, err)
	defer sc.Close()
	bob, err := sc.Actor("bob")
	assert.NilError(t, err)
	r, err := sc.object("configmaps/c")
	assert.NilError(t, err)
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c"}, "data": map[string]any{"k": "1"},
	}}
	_, err = sc.resourceClient(bob, r).Create(ctx, cm, metav1.CreateOptions{})
	assert.NilError(t, err)
	// A dry-run patch leaves the trace unable to say what c holds.
	dry := []byte(`{"data":{"k":"dry"}}`)
	_, err = sc.resourceClient(bob, r).Patch(ctx, "c", types.MergePatchType, dry, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
	assert.NilError(t, err)

	reads := func() int { n, _ := sc.OwnRoundTrips(); return n }
	before := reads()
	got, err := sc.read(r)
	assert.NilError(t, err)
	assert.Equal(t, got.Object["data"].(map[string]any)["k"], "1")
	_, err = sc.read(r)
	assert.NilError(t, err)
	assert.Equal(t, reads()-before, 1, "two reads with nothing in between")

	// Another dry run: a request the trace cannot read the object from,
	// which must still end the shared GET.
	_, err = sc.resourceClient(bob, r).Patch(ctx, "c", types.MergePatchType, dry, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
	assert.NilError(t, err)
	_, err = sc.read(r)
	assert.NilError(t, err)
	assert.Equal(t, reads()-before, 2, "a read after bob's request")
}
