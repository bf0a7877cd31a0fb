package controller_test

import (
	"path/filepath"
	"testing"

	"github.com/racekit/racekit"
)

// TestNoiseChangesNoVerdict runs every scenario of testdata (the races,
// the outcome and the benchmark's) with and without noise that cannot
// matter (racekit.CheckNoise), against the controllers TestRaces and
// TestRacesFindTheBug register: every verdict, the tutorial's failures
// included, must be the same.
func TestNoiseChangesNoVerdict(t *testing.T) {
	setups := []racekit.Setup{
		{Dir: "testdata/races", Controllers: []*racekit.Controller{memcached("tutorial", false), memcached("memcached", true)}},
		{Dir: "testdata/outcome", Controllers: []*racekit.Controller{memcached("memcached", true)}},
		// The tutorial fails testdata/outcome, with and without noise.
		{Dir: "testdata/outcome", Controllers: []*racekit.Controller{memcached("tutorial", false)}},
		{Dir: "testdata/bench", Controllers: []*racekit.Controller{memcached("memcached", true)}},
	}
	for _, s := range setups {
		s.CRDs = []string{"../../config/crd/bases"}
		checks, err := racekit.CheckNoise(s)
		if err != nil {
			t.Fatal(err)
		}
		if len(checks) == 0 {
			t.Fatalf("%s: no scenario", s.Dir)
		}
		for _, nc := range checks {
			for _, d := range nc.Differences {
				t.Errorf("%s, %s: %s", s.Dir, filepath.Base(nc.File), d)
			}
		}
	}
}
