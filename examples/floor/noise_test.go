package floor_test

import (
	"path/filepath"
	"testing"

	"github.com/racekit/racekit"
)

// TestNoiseChangesNoVerdict runs the replica-floor controller's scenarios,
// in this process and as a process of its own, with and without noise that
// cannot matter (racekit.CheckNoise): every verdict must be the same.
func TestNoiseChangesNoVerdict(t *testing.T) {
	checks, err := racekit.CheckNoise(racekit.Setup{Dir: "testdata/running", Controllers: runner()})
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) == 0 {
		t.Fatal("testdata/running: no scenario")
	}
	for _, nc := range checks {
		for _, d := range nc.Differences {
			t.Errorf("%s: %s", filepath.Base(nc.File), d)
		}
	}
}
