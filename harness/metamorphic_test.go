package harness

import (
	"context"
	"fmt"
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
	// opts returns the options; why, when no line of the file can run
	// with any options (an unknown teaching variant).
	opts func(t *testing.T, file string) (c *ControlPlane, opts ScriptOptions, why string)
}

// TestNoiseChangesNoVerdict runs every scenario the harness's own tests
// run (the failing twins, bad input and faults, the teaching variants'
// scripts and the Python operator; TestControllerScripts checks the
// controller scripts so, and judges their plain runs) with and
// without noise that cannot matter, and with every object's state read
// from the API server (CheckNoise): each assertion's verdict, the rules it
// names, and every failure that stops a script or ends it, must be the
// same. A bad-input script's verdict is the failure it stops at: the same
// line, command and kind.
func TestNoiseChangesNoVerdict(t *testing.T) {
	reference := func(t *testing.T, file string) (*ControlPlane, ScriptOptions, string) {
		c, o := withRef(t)
		// testdata/faults has a hook action that blocks on purpose.
		o.HookTimeout = time.Second
		return c, o, ""
	}
	cases := []noiseCase{
		{"twins", "../testdata/false/*.txtar", reference},
		{"bad", "../testdata/bad/*.txtar", reference},
		{"faults", "../testdata/faults/*.txtar", reference},
		{"variants", "../testdata/variants/*.txtar", variantOptions},
		{"python", "testdata/python/*.txtar", func(t *testing.T, _ string) (*ControlPlane, ScriptOptions, string) {
			if out, err := exec.Command(debianPython, "-c", "import kubernetes").CombinedOutput(); err != nil {
				t.Fatalf("the Python operator needs the official Python client: install it as root with tools/python-client: %v\n%s", err, out)
			}
			return controlPlane(t), ScriptOptions{}, ""
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
					c, opts, why := tc.opts(t, file)
					if why != "" {
						t.Logf("not run: %s", why)
						return
					}
					nc, err := CheckNoise(context.Background(), c, opts, file)
					assert.NilError(t, err)
					switch {
					case nc.Skipped != "":
						t.Logf("not run: %s", nc.Skipped)
						return
					case nc.Quiet != "":
						t.Logf("without noise, only reading from the API server: %s", nc.Quiet)
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
// fails before any line runs, with or without noise (why says so).
func variantOptions(t *testing.T, file string) (*ControlPlane, ScriptOptions, string) {
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
		return nil, ScriptOptions{}, fmt.Sprintf("%v: no line runs", err)
	}
	assert.NilError(t, c.InstallCRDs(context.Background(), crds))
	return c, opts, ""
}
