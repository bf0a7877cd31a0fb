package assets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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
	for _, rel := range Releases[1:] {
		all = append(all, rel.tools()...)
		kcm, err := controllerManager.of(rel)
		assert.NilError(t, err)
		all = append(all, kcm.tool)
	}
	for _, tl := range all {
		got, err := RequiredVersion(filepath.Join(root, "tools", tl.module, "go.mod"), tl.require)
		assert.NilError(t, err)
		assert.Equal(t, got, tl.version, "tools/%s/go.mod", tl.module)
	}
	// Every release's module repeats k8s.io/kubernetes' staging replace
	// directives at the release's published versions, and nothing else.
	for _, rel := range Releases[1:] {
		data, err := os.ReadFile(filepath.Join(root, "tools", rel.Module, "go.mod"))
		assert.NilError(t, err)
		minor := "v0." + strings.TrimPrefix(rel.Kubernetes, "1.")
		n := 0
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) == 4 && f[1] == "=>" {
				n++
				assert.Equal(t, f[0], f[2], "tools/%s/go.mod: %s", rel.Module, line)
				assert.Equal(t, f[3], minor, "tools/%s/go.mod: %s", rel.Module, line)
			}
		}
		assert.Assert(t, n > 20, "tools/%s/go.mod has %d staging replace directives", rel.Module, n)
	}
}

// TestReleaseOf: a release is named with or without its v, empty is the
// default, and a release the matrix lacks is refused with those it has.
func TestReleaseOf(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"", KubernetesVersion, ""},
		{"1.35.4", "1.35.4", ""},
		{"v1.34.4", "1.34.4", ""},
		{" 1.36.3 ", "1.36.3", ""},
		{"1.33.0", "", "Kubernetes 1.33.0 is not in racekit's release matrix (an unknown release); pick one of " + KubernetesVersion + ", 1.36.3, 1.35.4, 1.34.4"},
		{"1.35", "", "Kubernetes 1.35 is not in racekit's release matrix"},
	} {
		rel, err := ReleaseOf(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err)
			assert.Assert(t, errors.Is(err, ErrUnknownRelease))
			continue
		}
		assert.NilError(t, err)
		assert.Equal(t, rel.Kubernetes, tc.want)
	}
	t.Setenv(ReleaseEnv, "1.35.4")
	dir, err := Dir()
	assert.NilError(t, err)
	assert.Assert(t, strings.HasSuffix(dir, "kubernetes-1.35.4-etcd-"+EtcdVersion), dir)
	_, err = scheduler.of(Releases[2])
	assert.ErrorContains(t, err, "kube-scheduler is built for Kubernetes "+KubernetesVersion+" only, not for 1.35.4")
	t.Setenv(ReleaseEnv, "9.9.9")
	_, err = Find()
	assert.ErrorContains(t, err, "Kubernetes 9.9.9 is not in racekit's release matrix")
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

// TestLdflags: a Kubernetes binary is stamped with its release; etcd is
// not a Kubernetes binary.
func TestLdflags(t *testing.T) {
	kcm, err := controllerManager.of(Releases[2])
	assert.NilError(t, err)
	assert.DeepEqual(t, kcm.ldflags(), []string{"-ldflags", "-X k8s.io/component-base/version.gitVersion=v1.35.4 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=35 -X k8s.io/component-base/version.gitTreeState=clean"})
	assert.Assert(t, tools[1].ldflags() == nil, "etcd")
}

// TestBuildFailed: a release of the matrix that does not build says which,
// and names the others; the default's error is its build's own.
func TestBuildFailed(t *testing.T) {
	build := errors.New("build kube-apiserver in tools/releases/1.34.4: exit status 1")
	err := Releases[3].buildFailed(build)
	assert.ErrorContains(t, err, "Kubernetes 1.34.4 does not build here; pick another release with RACEKIT_KUBERNETES ("+KubernetesVersion+", 1.36.3, 1.35.4)")
	assert.Assert(t, errors.Is(err, build))
	assert.Equal(t, Releases[0].buildFailed(build), build)
}
