package rabbitmq_test

import (
	"regexp"
	"testing"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/realbugs/rabbitmq"
)

// explorations says what each exploration in testdata/explore finds
// against each release, by version: on a release with the bug it fails,
// and its table names the moments where the stale restart breaks the
// invariant; on one that fixed it every moment passes.
var explorations = map[string]map[string]outcome{
	"648_delete_recreate": {
		rabbitmq.V160.Version:  finds("before rabbitmq update rabbitmqclusters/r 1st", "mark stale", "wire rabbitmq delete statefulsets/r-server 200 1"),
		rabbitmq.V170.Version:  passes,
		rabbitmq.V1100.Version: passes,
	},
}

// finds is the outcome of an exploration that fails in one interleaving
// alone: interferer at moment, at the invariant claim.
// The other moments are not named: those of the operator's own calls are
// not the same in every learning run (a third update of the cluster, which
// a 409 answered, comes in some), and the finding is.
func finds(moment, interferer, claim string) outcome {
	return outcome{want: `(?m)interleavings at depth 1, 1 failed$(?s:.*?)^\s*` + regexp.QuoteMeta(moment) + ` +` + regexp.QuoteMeta(interferer) + ` .* FAIL [^ ]*\.txtar:\d+: ` + regexp.QuoteMeta(claim) + `: `}
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
			checkOutcomes(t, r, results, explorations, "testdata/explore")
		})
	}
}
