package harness

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// TestFailingTwins runs the failing twins under testdata/false: for every
// assertion command the registry holds, at least one well-formed scenario
// in which its claim is false, which must fail at that claim with a message
// that names the property. It fails when an assertion has no twin, so that
// none can be registered without a case that proves it can fail.
func TestFailingTwins(t *testing.T) {
	var names []string
	c, opts := withRef(t)
	for _, c := range Commands(opts.Commands...) {
		if c.Group == "assert" {
			names = append(names, c.Name)
		}
	}
	assert.Assert(t, len(names) > 0)
	twins, err := FailingTwins("../testdata/false", names)
	if err != nil {
		t.Error(err)
	}
	for _, tw := range twins {
		t.Run(strings.TrimSuffix(filepath.Base(tw.File), ".txtar"), func(t *testing.T) {
			t.Parallel()
			assert.NilError(t, CheckTwin(context.Background(), c, opts, tw))
		})
	}
}
