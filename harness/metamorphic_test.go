package harness

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
	"gotest.tools/v3/assert"
)

// noiseCase is a folder of scenarios CheckNoise runs, with the options
// that race them.
type noiseCase struct {
	name    string
	pattern string
	opts    func(t *testing.T, file string) (*ControlPlane, ScriptOptions)
}

// TestNoiseChangesNoVerdict runs every scenario the harness's own tests
// run (the failing twins, bad input and faults, the teaching variants'
// scripts, the controllers' scripts and the Python operator) with and
// without noise that cannot matter, and with every object's state read
// from the API server (CheckNoise): each assertion's verdict, the rules it
// names, and every failure that stops a script or ends it, must be the
// same. A bad-input script's verdict is the failure it stops at: the same
// line, command and kind.
func TestNoiseChangesNoVerdict(t *testing.T) {
	reference := func(t *testing.T, file string) (*ControlPlane, ScriptOptions) {
		c, o := withRef(t)
		// testdata/faults has a hook action that blocks on purpose.
		o.HookTimeout = time.Second
		return c, o
	}
	cases := []noiseCase{
		{"twins", "../testdata/false/*.txtar", reference},
		{"bad", "../testdata/bad/*.txtar", reference},
		{"faults", "../testdata/faults/*.txtar", reference},
		{"variants", "../testdata/variants/*.txtar", variantOptions},
		{"controllers", "testdata/controllers/*.txtar", func(t *testing.T, _ string) (*ControlPlane, ScriptOptions) {
			return controlPlane(t), ScriptOptions{Controllers: append(testControllers(), runningControllers()...)}
		}},
		{"python", "testdata/python/*.txtar", func(t *testing.T, _ string) (*ControlPlane, ScriptOptions) {
			if out, err := exec.Command(debianPython, "-c", "import kubernetes").CombinedOutput(); err != nil {
				t.Fatalf("the Python operator needs the official Python client: install it as root with tools/python-client: %v\n%s", err, out)
			}
			return controlPlane(t), ScriptOptions{}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files, err := filepath.Glob(tc.pattern)
			assert.NilError(t, err)
			assert.Assert(t, len(files) > 0, "no scenario in %s", tc.pattern)
			for _, file := range files {
				t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
					t.Parallel()
					c, opts := tc.opts(t, file)
					nc, err := CheckNoise(context.Background(), c, opts, file)
					assert.NilError(t, err)
					if nc.Skipped != "" {
						t.Logf("not run: %s", nc.Skipped)
						return
					}
					for _, d := range nc.Differences {
						t.Errorf("%s: %s", filepath.Base(file), d)
					}
				})
			}
		})
	}
}

// variantOptions returns the options that race the teaching variant a
// script of testdata/variants names in its bug section; an unknown one
// fails before any line runs, with or without noise, and is not run.
func variantOptions(t *testing.T, file string) (*ControlPlane, ScriptOptions) {
	ar, err := txtar.ParseFile(file)
	assert.NilError(t, err)
	bug := ""
	for _, f := range ar.Files {
		if f.Name == "bug" {
			bug = strings.TrimSpace(string(f.Data))
		}
	}
	c := controlPlane(t)
	opts, crds, err := reference(bug)
	if err != nil {
		t.Skipf("%s: %v: no line runs", filepath.Base(file), err)
	}
	assert.NilError(t, c.InstallCRDs(context.Background(), crds))
	return c, opts
}

var _ = os.ReadFile
