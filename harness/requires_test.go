package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// TestRequires runs a scenario whose release constraint holds, which goes
// on and is judged, and one whose constraint does not, which is skipped
// with the reason, neither passed nor failed, before any of its lines run.
func TestRequires(t *testing.T) {
	c := controlPlane(t)
	dir := t.TempDir()
	script := func(name, constraint, claim string) string {
		f := filepath.Join(dir, name+".txtar")
		body := "requires " + constraint + "\ncreate cm.yaml\nfield configmaps/cm data.k " + claim + "\n" +
			"-- cm.yaml --\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n"
		assert.NilError(t, os.WriteFile(f, []byte(body), 0o644))
		return f
	}
	opts := refOptions(t, c, "")
	opts.Files = []string{
		script("holds", "kubernetes>=1.0", "v"),
		script("holds_but_fails", "kubernetes>=1.0", "w"),
		script("does_not_hold", "kubernetes<1.0", "w"),
	}
	res := RunFiles(context.Background(), c, opts)
	assert.Equal(t, len(res), 3)
	got := map[string]Result{}
	for _, r := range res {
		got[r.Name] = r
	}
	assert.Assert(t, got["holds"].Passed && !got["holds"].Skipped, got["holds"].Log)
	assert.Assert(t, !got["holds_but_fails"].Passed && !got["holds_but_fails"].Skipped, got["holds_but_fails"].Log)
	skipped := got["does_not_hold"]
	assert.Assert(t, !skipped.Passed && skipped.Skipped, skipped.Log)
	assert.Assert(t, strings.Contains(skipped.Log, "requires kubernetes<1.0, and the control plane runs Kubernetes "+c.Version()), skipped.Log)
	assert.Assert(t, !strings.Contains(skipped.Log, "> create"), "a skipped scenario runs none of its lines after requires:\n%s", skipped.Log)
	assert.Equal(t, len(skipped.Failures), 0)
}
