package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"gotest.tools/v3/assert"
)

// TestChildRootsLeft checks which control-plane roots a fuzzing
// coordinator removes after its run: those a child of its own made and
// left when it died, and no other process's.
func TestChildRootsLeft(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dead := exec.Command("true")
	assert.NilError(t, dead.Run())
	gone := dead.Process.Pid
	self, parent := os.Getpid(), os.Getppid()
	tests := []struct {
		name     string
		owner    string
		removing bool
	}{
		{"a dead child's", fmt.Sprintf("%d %d\n", gone, self), true},
		{"a live child's", fmt.Sprintf("%d %d\n", self, self), false},
		{"a dead stranger's", fmt.Sprintf("%d %d\n", gone, parent), false},
		{"no owner", "", false},
	}
	var want []string
	for _, tc := range tests {
		root, err := os.MkdirTemp("", rootPrefix)
		assert.NilError(t, err)
		if tc.owner != "" {
			assert.NilError(t, os.WriteFile(filepath.Join(root, ownerFile), []byte(tc.owner), 0o600))
		}
		if tc.removing {
			want = append(want, root)
		}
	}
	got := childRootsLeft()
	slices.Sort(got)
	slices.Sort(want)
	assert.DeepEqual(t, got, want)
}
