package assets

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
)

// TestVersionsMatchToolModules keeps the pinned versions and the nested
// modules that build them in step.
func TestVersionsMatchToolModules(t *testing.T) {
	root, err := Root(".")
	assert.NilError(t, err)
	all := append([]tool(nil), tools...)
	for _, c := range components {
		all = append(all, c.tool)
	}
	for _, tl := range all {
		got, err := RequiredVersion(filepath.Join(root, "tools", tl.module, "go.mod"), tl.require)
		assert.NilError(t, err)
		assert.Equal(t, got, tl.version, "tools/%s/go.mod", tl.module)
	}
}

func TestFind(t *testing.T) {
	tests := []struct {
		name    string
		files   []string
		wantErr string
	}{
		{"both present", []string{"kube-apiserver", "etcd"}, ""},
		{"etcd missing", []string{"kube-apiserver"}, "[etcd] missing"},
		{"empty", nil, "[kube-apiserver etcd] missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				assert.NilError(t, os.WriteFile(filepath.Join(dir, f), []byte("#!/bin/sh\n"), 0o755))
			}
			t.Setenv(EnvVar, dir)
			got, err := Find()
			if tc.wantErr == "" {
				assert.NilError(t, err)
				assert.Equal(t, got, dir)
				return
			}
			assert.Assert(t, errors.Is(err, ErrMissing))
			assert.ErrorContains(t, err, tc.wantErr)
			assert.ErrorContains(t, err, EnvVar)
		})
	}
}

func TestFindDefaultSaysMakeEnvtest(t *testing.T) {
	t.Setenv(EnvVar, "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	_, err := Find()
	assert.Assert(t, errors.Is(err, ErrMissing))
	assert.ErrorContains(t, err, "make envtest")
}

func TestRequiredVersion(t *testing.T) {
	p := filepath.Join(t.TempDir(), "go.mod")
	assert.NilError(t, os.WriteFile(p, []byte("module x\n\nrequire k8s.io/kubernetes v1.2.3\n\nrequire (\n\tgo.etcd.io/etcd/server/v3 v3.4.5 // indirect\n)\n"), 0o644))
	v, err := RequiredVersion(p, "k8s.io/kubernetes")
	assert.NilError(t, err)
	assert.Equal(t, v, "v1.2.3")
	v, err = RequiredVersion(p, "go.etcd.io/etcd/server/v3")
	assert.NilError(t, err)
	assert.Equal(t, v, "v3.4.5")
	_, err = RequiredVersion(p, "nope")
	assert.ErrorContains(t, err, "does not require nope")
}

// TestComponentsSayTheirTarget checks what a missing component's error
// says: ErrMissing, where it looked, and the make target that builds it.
func TestComponentsSayTheirTarget(t *testing.T) {
	tests := []struct {
		find   func() (string, error)
		binary string
		target string
	}{
		{FindControllerManager, ControllerManager, "make controller-manager"},
		{FindScheduler, Scheduler, "make scheduler"},
		{FindKubemark, Kubemark, "make kubemark"},
	}
	for _, tc := range tests {
		t.Run(tc.binary, func(t *testing.T) {
			empty := t.TempDir()
			t.Setenv(EnvVar, empty)
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			t.Setenv("HOME", t.TempDir())
			_, err := tc.find()
			assert.Assert(t, errors.Is(err, ErrMissing))
			assert.ErrorContains(t, err, tc.binary+" is in none of ["+empty+" (from "+EnvVar+")")
			assert.ErrorContains(t, err, "run `"+tc.target+"` to build it")

			assert.NilError(t, os.WriteFile(filepath.Join(empty, tc.binary), []byte("#!/bin/sh\n"), 0o755))
			got, err := tc.find()
			assert.NilError(t, err)
			assert.Equal(t, got, filepath.Join(empty, tc.binary))
		})
	}
}
