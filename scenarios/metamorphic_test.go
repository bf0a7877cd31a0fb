package scenarios

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/racekit/racekit/harness"
)

// TestNoiseChangesNoVerdict runs every scenario of the catalogue and of
// testdata twice (harness.CheckNoise): as it is, and with noise that
// cannot matter (another actor writing, watching and reading an unrelated
// object; each actor of the scenario watching a resource it never writes)
// and every object's state read from the API server. Every verdict must be
// the same: each assertion's, the rules each failure names, the failures
// that stop a script, and each run of an exploration, where the noise
// keeps moments the plain exploration left out, whose verdicts must be
// those of the moments explored instead (testdata/explore_armed_hook.txtar
// fails at one of those).
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
	if len(more) == 0 || len(files) == len(more) {
		t.Fatalf("no scenario here or in testdata: %v", files)
	}
	opts := options(t, "")
	for _, f := range files {
		t.Run(strings.TrimSuffix(f, ".txtar"), func(t *testing.T) {
			t.Parallel()
			nc, err := harness.CheckNoise(context.Background(), cp, opts, f)
			if err != nil {
				t.Fatal(err)
			}
			if nc.Skipped != "" || nc.Quiet != "" {
				t.Errorf("%s is not compared with noise: %s%s; the catalogue's scenarios all take it", f, nc.Skipped, nc.Quiet)
			}
			for _, d := range nc.Differences {
				t.Errorf("%s: %s", f, d)
			}
			t.Logf("%d verdicts; actors watching the noise: %v", len(nc.Plain), nc.Actors)
		})
	}
}
