package scenarios

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/racekit/racekit/harness"
)

// TestNoiseChangesNoVerdict runs every scenario of the catalogue and of
// testdata with and without noise that cannot matter (harness.CheckNoise)
// and requires the same verdicts.
func TestNoiseChangesNoVerdict(t *testing.T) {
	files, err := filepath.Glob("*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob("testdata/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	opts := options(t, "")
	for _, f := range files {
		t.Run(strings.TrimSuffix(f, ".txtar"), func(t *testing.T) {
			t.Parallel()
			nc, err := harness.CheckNoise(context.Background(), cp, opts, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range nc.Differences {
				t.Errorf("%s: %s", f, d)
			}
			t.Logf("%d verdicts; actors watching the noise: %v", len(nc.Plain), nc.Actors)
		})
	}
}
