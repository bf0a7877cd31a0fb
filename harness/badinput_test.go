package harness

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// TestBadInput runs each script under testdata/bad and testdata/faults, all
// of which must fail, and checks that the failure names file:line and says
// what was expected: the script's "want" section is a regular expression
// the output must match. These are malformed input and faults; well-formed
// scenarios whose claim is false are the failing twins under
// testdata/false (TestFailingTwins).
func TestBadInput(t *testing.T) {
	files, err := filepath.Glob("../testdata/bad/*.txtar")
	faults, err2 := filepath.Glob("../testdata/faults/*.txtar")
	assert.NilError(t, err2)
	files = append(files, faults...)
	assert.NilError(t, err)
	assert.Assert(t, len(files) > 0)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			// The want section is read by hand: some of these files are
			// archives that txtar.Parse itself cannot read.
			data, err := os.ReadFile(file)
			assert.NilError(t, err)
			_, want, found := strings.Cut(string(data), "\n-- want --\n")
			want = strings.TrimSpace(want)
			assert.Assert(t, found && want != "", "%s has no want section", file)

			c, opts := withRef(t, file)
			opts.HookTimeout = time.Second
			res := RunFiles(context.Background(), c, opts)
			assert.Equal(t, len(res), 1)
			out := res[0].Log
			assert.Assert(t, !res[0].Passed, "the script passed, but it must fail; output:\n%s", out)
			assert.Assert(t, regexp.MustCompile(want).MatchString(out), "output does not match %q:\n%s", want, out)
		})
	}
}
