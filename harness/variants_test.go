package harness

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"gotest.tools/v3/assert"
)

// TestTeachingVariantScripts runs each script under testdata/variants
// against the teaching variant its "bug" section names ("" for the
// production controller). Each must fail, and its output must match the
// regular expression of its "want" section: the harness stops an unbounded
// retry with a failure that names it, and refuses an unknown variant.
func TestTeachingVariantScripts(t *testing.T) {
	files, err := filepath.Glob("../testdata/variants/*.txtar")
	assert.NilError(t, err)
	assert.Assert(t, len(files) > 0)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(file)
			assert.NilError(t, err)
			sections := map[string]string{}
			for _, f := range ar.Files {
				sections[f.Name] = strings.TrimSpace(string(f.Data))
			}
			want, ok := sections["want"]
			assert.Assert(t, ok && want != "", "%s has no want section", file)
			_, ok = sections["bug"]
			assert.Assert(t, ok, "%s has no bug section", file)

			c := controlPlane(t)
			opts, crds, err := reference(sections["bug"])
			if err != nil {
				// An unknown variant: what racekit run --bug says.
				res := Result{Log: "FAIL: " + err.Error()}
				assert.Assert(t, regexp.MustCompile(sections["want"]).MatchString(res.Log), "output does not match %q:\n%s", sections["want"], res.Log)
				return
			}
			assert.NilError(t, c.InstallCRDs(context.Background(), crds))
			opts.Files = []string{file}
			res := RunFiles(context.Background(), c, opts)
			assert.Equal(t, len(res), 1)
			out := res[0].Log
			assert.Assert(t, !res[0].Passed, "the script passed, but it must fail; output:\n%s", out)
			assert.Assert(t, regexp.MustCompile(want).MatchString(out), "output does not match %q:\n%s", want, out)
		})
	}
}
