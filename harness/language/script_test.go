package language

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/controlplane"
)

// scratch is a control plane's scratch folder, as Scratch gives it: dir,
// or err once its Stop has begun.
type scratch struct {
	dir string
	err error
}

func (s scratch) Scratch() (string, error) { return s.dir, s.err }

// TestWorkdirRoot checks that the scripts' work folder is made inside the
// control plane's scratch folder, a new one for each run, and that when
// there is none (the control plane stopping) workdirRoot fails, saying
// why, and makes nothing in TMPDIR: given no root, testscript makes its
// own there, which an interrupt left behind.
func TestWorkdirRoot(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		wantErr error
	}{
		{name: "running"},
		{name: "stopping", err: fmt.Errorf("scratch folder: %w", controlplane.ErrStopped), wantErr: controlplane.ErrStopped},
		{name: "no folder", err: os.ErrPermission, wantErr: os.ErrPermission},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			dir := t.TempDir()
			first, err := workdirRoot(scratch{dir: dir, err: tc.err})
			entries, readErr := os.ReadDir(tmp)
			assert.NilError(t, readErr)
			assert.Equal(t, len(entries), 0, "made in TMPDIR: %v", entries)
			if tc.wantErr != nil {
				assert.Assert(t, errors.Is(err, tc.wantErr), "got %v", err)
				assert.Equal(t, first, "")
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, filepath.Dir(first), dir)
			second, err := workdirRoot(scratch{dir: dir})
			assert.NilError(t, err)
			assert.Assert(t, first != second, "two runs share %s", first)
		})
	}
}
