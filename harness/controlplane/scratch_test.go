package controlplane

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
)

// TestScratch checks that the scripts' folder is inside the control
// plane's own, and that once Stop has begun Scratch makes none: a folder
// made then would outlive the removal of the control plane's, or break it.
func TestScratch(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name     string
		stopping bool
		wantErr  error
	}{
		{name: "running", wantErr: nil},
		{name: "stopping", stopping: true, wantErr: ErrStopped},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(root, tc.name)
			cp := &ControlPlane{root: root, stopping: tc.stopping}
			dir, err := cp.Scratch()
			if tc.wantErr != nil {
				assert.Assert(t, errors.Is(err, tc.wantErr), "got %v", err)
				_, statErr := os.Stat(root)
				assert.Assert(t, errors.Is(statErr, os.ErrNotExist), "Scratch made %s", root)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, dir, filepath.Join(root, "scripts"))
			fi, err := os.Stat(dir)
			assert.NilError(t, err)
			assert.Assert(t, fi.IsDir())
		})
	}
}
