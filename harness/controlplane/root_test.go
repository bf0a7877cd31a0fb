package controlplane

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/internal/watchdog"
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

// TestNewRoot checks the root a control plane starts with: made by its
// watchdog in the temporary directory, holding the folders envtest expects
// and the owner file; that the watchdog is a child this process knows by
// name as its own; and that the watchdog, told that the stop failed,
// removes the root.
func TestNewRoot(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	wd, err := newRoot()
	assert.NilError(t, err)
	root := wd.Root()
	assert.Equal(t, filepath.Dir(root), tmp)
	assert.Assert(t, strings.HasPrefix(filepath.Base(root), rootPrefix), "root %s", root)
	entries, err := os.ReadDir(root)
	assert.NilError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.DeepEqual(t, names, []string{"etcd", "kube-apiserver", ownerFile})
	owner, err := os.ReadFile(filepath.Join(root, ownerFile))
	assert.NilError(t, err)
	assert.Equal(t, string(owner), fmt.Sprintf("%d %d\n", os.Getpid(), os.Getppid()))
	// A fuzzing coordinator tells the watchdogs it adopted from its own
	// by these (AdoptOrphans).
	// (The shared control plane, if started, has a watchdog too.)
	var mine, all []child
	for _, c := range children(watchdogComm) {
		all = append(all, c)
		if watchdog.Mine(c.pid) && slices.Contains(c.args, tmp) {
			mine = append(mine, c)
		}
	}
	assert.Equal(t, len(mine), 1, "want one child named %q, started in %s, that watchdog.Mine knows; children of that name: %+v", watchdogComm, tmp, all)

	assert.NilError(t, wd.Stop(false))
	assert.Assert(t, !watchdog.Mine(mine[0].pid), "watchdog.Mine still knows the watchdog after its Stop")
	left, err := os.ReadDir(tmp)
	assert.NilError(t, err)
	assert.Assert(t, len(left) == 0, "left in TMPDIR after the watchdog's sweep: %v", left)
}

// BenchmarkNewRoot measures what the watchdog adds to a control plane's
// start and stop: this binary, run again, makes the root.
func BenchmarkNewRoot(b *testing.B) {
	b.Setenv("TMPDIR", b.TempDir())
	for b.Loop() {
		wd, err := newRoot()
		if err != nil {
			b.Fatal(err)
		}
		if err := os.RemoveAll(wd.Root()); err != nil {
			b.Fatal(err)
		}
		if err := wd.Stop(true); err != nil {
			b.Fatal(err)
		}
	}
}
