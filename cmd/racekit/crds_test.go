package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness"
	"github.com/racekit/racekit/internal/assets"
)

// The README's racing of a Python operator of a custom resource from the
// command line: its CRD folder and its scenario.
const (
	pythonCRDs     = "../../harness/testdata/python/crds"
	pythonOperator = "../../harness/testdata/python/python_crd_operator.txtar"
)

// TestCRDsBadInput checks that racekit run and explore refuse a --crds
// that names no CRD, with exit code 2 and a message naming the path and
// what is wrong, before any control plane starts.
func TestCRDsBadInput(t *testing.T) {
	noBuild(t) // a control plane started by mistake fails with exit 1
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte(data), 0o644))
		return p
	}
	scenario := write("s.txtar", "# A scenario.\ncreate webapp.yaml\n")
	noCRD := write("deployment.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n")
	garbled := write("garbled.yaml", "kind: [CustomResourceDefinition\n")
	write("empty/README.md", "no YAML here\n")
	emptyDir := filepath.Join(dir, "empty")
	missing := filepath.Join(dir, "no-such-crds")

	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"run, a missing path", []string{"run", "--crds", missing, scenario}, "racekit run: --crds: CRD path " + missing + ": stat " + missing + ": no such file or directory"},
		{"run, a file that is no CRD", []string{"run", "--crds", noCRD, scenario}, "racekit run: --crds: CRD path " + noCRD + " holds no CustomResourceDefinition"},
		{"run, a folder with no CRD", []string{"run", "--crds", emptyDir, scenario}, "racekit run: --crds: CRD path " + emptyDir + " holds no CustomResourceDefinition"},
		{"run, a file that does not parse", []string{"run", "--crds", garbled, scenario}, "racekit run: --crds: decode " + garbled + " (document 1): "},
		{"run, a good path and a missing one", []string{"run", "--crds", pythonCRDs, "--crds", missing, scenario}, "racekit run: --crds: CRD path " + missing + ": "},
		{"run, an empty path", []string{"run", "--crds=", scenario}, `racekit run: invalid value "" for flag -crds: want a file or a folder of CRDs`},
		{"explore, a missing path", []string{"explore", annotation, "--crds", missing}, "racekit explore: --crds: CRD path " + missing + ": stat " + missing + ": no such file or directory"},
		{"explore, a file that is no CRD", []string{"explore", "--crds", noCRD, annotation}, "racekit explore: --crds: CRD path " + noCRD + " holds no CustomResourceDefinition"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			assert.Equal(t, run(tc.args, &stdout, &stderr), exitUsage, "stderr: %s", stderr.String())
			assert.Assert(t, strings.HasPrefix(stderr.String(), tc.wantErr), "stderr:\n%s", stderr.String())
			assert.Equal(t, stdout.String(), "")
		})
	}
}

// TestCRDsFromTheCommandLine races a Python operator of a custom resource
// with racekit run and a txtar file alone, as the README shows: with
// --crds it passes, and without, its resource is unknown and it fails.
func TestCRDsFromTheCommandLine(t *testing.T) {
	if _, err := assets.Find(); err != nil {
		t.Fatalf("%v", err) // racekit would build them, for minutes
	}
	built(t)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string // on standard output
	}{
		{"with --crds", []string{"run", "--crds", pythonCRDs, pythonOperator}, exitOK, "PASS python_crd_operator"},
		{"without", []string{"run", pythonOperator}, exitFail, `no matches for kind "Greeting"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each run has a control plane of its own
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bins.racekit, tc.args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatalf("run racekit: %v", err)
			}
			assert.Equal(t, cmd.ProcessState.ExitCode(), tc.wantCode, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			assert.Assert(t, strings.Contains(stdout.String(), tc.want), "stdout:\n%s", stdout.String())
		})
	}
}

// greetingExplore explores an annotation of a Greeting, a resource only
// --crds installs, with bob's annotation at each of its moments.
const greetingExplore = `# Two annotations of a custom resource, in either order.
create greeting.yaml
explore annotate alice greetings/world owner=alice
with annotate bob greetings/world team=blue
annotation greetings/world owner=alice
annotation greetings/world team=blue
-- greeting.yaml --
apiVersion: example.com/v1
kind: Greeting
metadata:
  name: world
spec:
  name: world
`

// TestExploreCRDs explores a scenario of a custom resource that --crds
// installs on the control plane explore is given, after it has started.
func TestExploreCRDs(t *testing.T) {
	if _, err := assets.Find(); err != nil {
		t.Fatalf("%v", err) // racekit would build them, for minutes
	}
	ctx := context.Background()
	cp, err := startControlPlane(ctx, io.Discard)
	assert.NilError(t, err)
	defer cp.Close()
	shared := func(context.Context, io.Writer) (*harness.ControlPlane, func(), error) {
		return cp, func() {}, nil
	}
	file := filepath.Join(t.TempDir(), "greeting_explore.txtar")
	assert.NilError(t, os.WriteFile(file, []byte(greetingExplore), 0o644))
	var stdout, stderr strings.Builder
	code := explore([]string{"--crds", pythonCRDs, file}, &stdout, &stderr, shared)
	assert.Equal(t, code, exitOK, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Assert(t, strings.Contains(stdout.String(), "before alice patch greetings/world"), "stdout:\n%s", stdout.String())
}
