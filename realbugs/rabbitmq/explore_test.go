package rabbitmq_test

import (
	"testing"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/realbugs/rabbitmq"
)

// explorations says what each exploration in testdata/explore finds
// against each release, by version: on a release with the bug exactly one
// run fails, the stale restart at the finalizer's removal, at the
// invariant it breaks; on one that fixed it no run fails. The other
// moments are not named: those of the operator's own calls are not the
// same in every learning run (a third update of the cluster, which a 409
// answered, comes in some), and the finding is.
var explorations = map[string]map[string]racekit.Want{
	"648_delete_recreate": {
		rabbitmq.V160.Version: racekit.Finds(racekit.WantRun{
			Moment: "before rabbitmq update rabbitmqclusters/r 1st", Interferer: "mark stale",
			Fails: racekit.FailsAt("wire rabbitmq delete statefulsets/r-server 200 1")}),
		rabbitmq.V170.Version:  racekit.Passes(),
		rabbitmq.V1100.Version: racekit.Passes(),
	},
}

// TestExplore runs each exploration against each release, as
// TestRegressions runs the regression forms: explore must find the bug
// where it is, with no stale moment placed by hand, and find nothing where
// it was fixed.
func TestExplore(t *testing.T) {
	for _, r := range rabbitmq.Releases {
		t.Run(r.Version, func(t *testing.T) {
			results, err := racekit.Play(setup(t, "testdata/explore", r))
			if err != nil {
				t.Fatal(err)
			}
			racekit.Expect(t, results, against(explorations, r))
		})
	}
}
