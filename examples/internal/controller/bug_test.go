package controller_test

import (
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
	// Against the tutorial, bob's finalizer is lost: the check of both
	// finalizers fails, having seen the controller's alone.
	racekit.Expect(t, results, map[string]racekit.Want{
		"finalizer_survives": racekit.FailsAt(`field memcacheds/cache metadata.finalizers ["bob.example.com/finalizer","cache.example.com/finalizer"]`).
			Saw(`["cache.example.com/finalizer"]`),
	})
}
