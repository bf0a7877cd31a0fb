package controller_test

import (
	"strings"
	"testing"

	"github.com/racekit/racekit"
)

// TestRacesFindTheBug shows that racekit finds the tutorial's bug with a
// scenario that asserts only the outcome. testdata/outcome checks that
// bob's finalizer survives a race with the controller's first reconcile,
// whichever controller reconciles Memcacheds: it must pass against the fix
// and fail, on that check, against the tutorial. Were the tutorial fixed,
// or the scenario no longer provoking the race, this test would fail.
func TestRacesFindTheBug(t *testing.T) {
	outcome := func(c *racekit.Controller) racekit.Setup {
		return racekit.Setup{
			Dir:         "testdata/outcome",
			CRDs:        []string{"../../config/crd/bases"},
			Controllers: []*racekit.Controller{c},
		}
	}
	racekit.Run(t, outcome(memcached("memcached", true)))

	results, err := racekit.Play(outcome(memcached("tutorial", false)))
	if err != nil {
		t.Fatal(err)
	}
	if len(results) == 0 {
		t.Fatal("testdata/outcome has no scenario")
	}
	for _, r := range results {
		switch {
		case r.Passed:
			t.Errorf("%s passed against the tutorial controller: it should have caught the lost finalizer\n%s", r.Name, r.Trace.Normalize())
		case !strings.Contains(r.Log, "memcacheds/cache metadata.finalizers: (-want +got)"):
			t.Errorf("%s failed against the tutorial controller, but not on bob's finalizer:\n%s", r.Name, r.Log)
		}
	}
}
