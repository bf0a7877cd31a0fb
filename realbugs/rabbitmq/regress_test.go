package rabbitmq_test

import (
	"testing"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/realbugs/rabbitmq"
)

// regressions says what each regression form in testdata/regressions does
// against each release, by version. A form fails on the release that has
// its bug, at the claim that bug breaks, having seen what the bug leaves,
// and passes on the first release that fixes it; #758 is fixed by none.
var regressions = map[string]map[string]racekit.Want{
	"648_stale_restart": {
		rabbitmq.V160.Version:  racekit.FailsAt("field statefulsets/r-server metadata.uid").Saw(racekit.NotFound),
		rabbitmq.V170.Version:  racekit.Passes(),
		rabbitmq.V1100.Version: racekit.Passes(),
	},
	"782_crash_between_steps": {
		rabbitmq.V160.Version:  racekit.FailsAt("field persistentvolumeclaims/persistence-r782-server-0 spec.resources.requests.storage 15Gi").Saw("10Gi"),
		rabbitmq.V170.Version:  racekit.FailsAt("field persistentvolumeclaims/persistence-r782-server-0 spec.resources.requests.storage 15Gi").Saw("10Gi"),
		rabbitmq.V1100.Version: racekit.Passes(),
	},
	"758_unobserved_across_restart": {
		rabbitmq.V160.Version:  racekit.FailsAt("field statefulsets/r-server spec.replicas 3").Saw("2"),
		rabbitmq.V170.Version:  racekit.FailsAt("field statefulsets/r-server spec.replicas 3").Saw("2"),
		rabbitmq.V1100.Version: racekit.FailsAt("field statefulsets/r-server spec.replicas 3").Saw("2"),
	},
}

// TestRegressions runs each regression form against each release and
// checks both directions: it fails, as expected, where the bug is, and
// passes where it was fixed. racekit.Play returns the outcomes as values
// instead of failing the test, and racekit.Expect compares them.
func TestRegressions(t *testing.T) {
	for _, r := range rabbitmq.Releases {
		t.Run(r.Version, func(t *testing.T) {
			results, err := racekit.Play(setup(t, "testdata/regressions", r))
			if err != nil {
				t.Fatal(err)
			}
			racekit.Expect(t, results, against(regressions, r))
		})
	}
}

// against returns what table says each scenario must do against r.
func against(table map[string]map[string]racekit.Want, r rabbitmq.Release) map[string]racekit.Want {
	out := map[string]racekit.Want{}
	for name, byVersion := range table {
		if w, ok := byVersion[r.Version]; ok {
			out[name] = w
		}
	}
	return out
}
