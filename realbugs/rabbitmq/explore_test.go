package rabbitmq_test

import (
	"testing"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/realbugs/rabbitmq"
)

// explorations says what each exploration in testdata/explore finds
// against each release, by version: on a release with the bug exactly one
// run fails, at the invariant it breaks (#648: the stale restart at the
// finalizer's removal; #782: the kill between the resize's two steps); on
// one that fixed it no run fails. The other
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
	// The kill between the two steps of the resize: "after the orphan
	// delete" is left out, since kube-controller-manager's garbage
	// collector acts on its answer on its own, so the run is "before the
	// PVC's update", with the same state.
	"782_resize_crash": {
		rabbitmq.V160.Version:  racekit.Finds(resize782),
		rabbitmq.V170.Version:  racekit.Finds(resize782),
		rabbitmq.V1100.Version: racekit.Passes(),
	},
}

// resize782 is the run in which rabbitmq #782 leaves the PVC at its old
// size.
var resize782 = racekit.WantRun{
	Moment: "before rabbitmq update persistentvolumeclaims/persistence-r782-server-0 1st", Interferer: "crash rabbitmq",
	Fails: racekit.FailsAt("field persistentvolumeclaims/persistence-r782-server-0 spec.resources.requests.storage 15Gi").Saw("10Gi"),
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
