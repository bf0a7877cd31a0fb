package assets

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// tool is one binary built from a nested module under tools/.
type tool struct {
	binary  string // file name in the assets folder
	module  string // folder under tools/
	pkg     string // main package to build
	require string // module whose version must match
	version string // that version, with the v
	target  string // the make target that builds it, for progress lines
}

// tools are the default release's kube-apiserver and etcd.
var tools = Releases[0].tools()

// tools returns rel's kube-apiserver and etcd: kube-apiserver from rel's
// module, etcd from tools/etcd.
func (rel Release) tools() []tool {
	return []tool{
		{"kube-apiserver", rel.module("kube-apiserver"), "k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes", "v" + rel.Kubernetes, "envtest"},
		{"etcd", "etcd", "go.etcd.io/etcd/server/v3", "go.etcd.io/etcd/server/v3", "v" + rel.Etcd, "envtest"},
	}
}

// module is the folder under tools/ that builds binary of rel: its own
// module for the default release, rel's module for another.
func (rel Release) module(binary string) string {
	if rel.Module == "" {
		return binary
	}
	return rel.Module
}

// Build makes sure both binaries are in Dir, building those that are missing
// from the nested modules under root/tools. It does nothing when they are
// there already. Progress goes to w.
func Build(ctx context.Context, root string, w io.Writer) (string, error) {
	rel, err := Selected()
	if err != nil {
		return "", err
	}
	dir, err := rel.Dir()
	if err != nil {
		return "", err
	}
	missing := missingIn(dir)
	if len(missing) == 0 {
		fmt.Fprintf(w, "envtest: kube-apiserver %s and etcd %s are ready in %s\n", rel.Kubernetes, rel.Etcd, dir)
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	fmt.Fprintf(w, "envtest: building %s into %s\n", strings.Join(missing, " and "), dir)
	fmt.Fprintf(w, "envtest: the first build takes several minutes (about 10 on 2 cores); with a warm Go build cache about 20 s\n")
	for _, t := range rel.tools() {
		if !contains(missing, t.binary) {
			continue
		}
		if err := t.build(ctx, root, dir, w); err != nil {
			return "", rel.buildFailed(err)
		}
	}
	return dir, nil
}

func (t tool) build(ctx context.Context, root, dir string, w io.Writer) error {
	modDir := filepath.Join(root, "tools", t.module)
	if err := t.checkVersion(ctx, modDir); err != nil {
		return err
	}
	start := time.Now()
	fmt.Fprintf(w, "%s: go build %s (%s %s)\n", t.target, t.pkg, t.require, t.version)
	// Build into a temporary name and rename, so that an interrupted build
	// never leaves a half-written binary that Find would accept.
	tmp := filepath.Join(dir, "."+t.binary+".tmp")
	cmd := exec.CommandContext(ctx, "go", append(append([]string{"build", "-trimpath"}, t.ldflags()...), "-o", tmp, t.pkg)...)
	cmd.Dir = modDir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("build %s in %s: %w\n%s", t.binary, modDir, err, out.String())
	}
	if err := os.Rename(tmp, filepath.Join(dir, t.binary)); err != nil {
		return fmt.Errorf("install %s: %w", t.binary, err)
	}
	fmt.Fprintf(w, "%s: built %s in %s\n", t.target, t.binary, time.Since(start).Round(time.Second))
	return nil
}

// buildFailed says that rel does not build, and how to pick another.
func (rel Release) buildFailed(err error) error {
	if rel.Module == "" {
		return err
	}
	var others []string
	for _, r := range Releases {
		if r.Kubernetes != rel.Kubernetes {
			others = append(others, r.Kubernetes)
		}
	}
	return fmt.Errorf("Kubernetes %s does not build here; pick another release with %s (%s): %w", rel.Kubernetes, ReleaseEnv, strings.Join(others, ", "), err)
}

// ldflags stamp a Kubernetes binary with its release, as Kubernetes' own
// build does, so that kube-apiserver's /version says which it is (requires
// reads it); unstamped, it says v0.0.0-master.
func (t tool) ldflags() []string {
	if t.require != "k8s.io/kubernetes" {
		return nil
	}
	major, rest, _ := strings.Cut(strings.TrimPrefix(t.version, "v"), ".")
	minor, _, _ := strings.Cut(rest, ".")
	const pkg = "k8s.io/component-base/version"
	return []string{"-ldflags", fmt.Sprintf("-X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s -X %s.gitTreeState=clean", pkg, t.version, pkg, major, pkg, minor, pkg)}
}

// checkVersion refuses to build when the nested module requires another
// version than the one pinned here, since the folder name would then lie.
func (t tool) checkVersion(ctx context.Context, modDir string) error {
	got, err := RequiredVersion(filepath.Join(modDir, "go.mod"), t.require)
	if err != nil {
		return err
	}
	if got != t.version {
		return fmt.Errorf("tools/%s/go.mod requires %s %s, but internal/assets pins %s: change both together", t.module, t.require, got, t.version)
	}
	return nil
}

// RequiredVersion returns the version of module that the go.mod at path
// requires.
func RequiredVersion(path, module string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == module {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("%s does not require %s", path, module)
}

// Root returns the repository root: the nearest folder at or above dir that
// holds tools/kube-apiserver/go.mod.
func Root(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "tools", "kube-apiserver", "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no racekit checkout (tools/kube-apiserver/go.mod) at or above %s", dir)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
