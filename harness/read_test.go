package harness

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// TestAssertionsShareReads checks that a run of assertions reads each
// object once, and that anything an actor does in between makes the next
// assertion read again: the saving must never cost a stale answer. Each
// case counts the harness's own calls beyond those of the same script
// without its assertions.
func TestAssertionsShareReads(t *testing.T) {
	const base = "create webapp.yaml\nreconcile webapps/web\n"
	tests := []struct {
		name      string
		tail      string
		wantReads int
	}{
		{name: "one object, three assertions", wantReads: 1, tail: `field deployments/web spec.replicas 1
field deployments/web metadata.name web
! annotation deployments/web team
`},
		{name: "two objects, interleaved", wantReads: 2, tail: `field deployments/web spec.replicas 1
field webapps/web spec.replicas 1
field deployments/web spec.replicas 1
condition webapps/web Ready True
`},
		{name: "a write in between", wantReads: 2, tail: `! annotation deployments/web team
annotate bob deployments/web team=blue
annotation deployments/web team=blue
`},
		{name: "a write in a hook in between", wantReads: 2, tail: `field deployments/web spec.replicas 1
on after bob get deployments/web 1st: scale carol deployments/web 3
get bob deployments/web snap
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
	without := own(t, base)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, own(t, base+tc.tail)-without, tc.wantReads)
		})
	}
}

// TestReadAfterActorCall checks the recorder side of the shared reads:
// within one command, a read followed by an actor's request is not reused,
// whatever the command, because the request may have changed the object.
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

	reads := func() int { n, _ := sc.OwnRoundTrips(); return n }
	before := reads()
	_, err = sc.read(r)
	assert.NilError(t, err)
	_, err = sc.read(r)
	assert.NilError(t, err)
	assert.Equal(t, reads()-before, 1, "two reads with nothing in between")

	patch := []byte(`{"data":{"k":"2"}}`)
	_, err = sc.resourceClient(bob, r).Patch(ctx, "c", types.MergePatchType, patch, metav1.PatchOptions{})
	assert.NilError(t, err)
	got, err := sc.read(r)
	assert.NilError(t, err)
	assert.Equal(t, reads()-before, 2, "a read after bob's patch")
	assert.Equal(t, got.Object["data"].(map[string]any)["k"], "2")
}
