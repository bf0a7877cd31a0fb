package floor_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/racekit/racekit"

	"github.com/racekit/racekit/examples/floor"
)

// TestAuto explores testdata/auto with explore auto: the controller
// running on its own in this process, as in TestRunning, with no hint.
// Its production form has no finding.
func TestAuto(t *testing.T) {
	results, err := racekit.Play(racekit.Setup{Dir: "testdata/auto", Controllers: runner()})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Explored == nil || r.Explored.Auto == nil {
			t.Fatalf("%s explored nothing auto:\n%s", r.Name, r.Log)
		}
		t.Log(r.Explored.Table())
	}
	racekit.Expect(t, results, map[string]racekit.Want{"floor_raise": racekit.Passes()})
}

// runner registers the controller as floor, run on its own as its main
// runs it (TestRunning's registration, which README.md shows whole).
func runner() []*racekit.Controller {
	return []*racekit.Controller{
		racekit.Runner("floor", clientgoscheme.Scheme, &appsv1.Deployment{},
			func(ctx context.Context, cfg *rest.Config, namespace string) error {
				return floor.Run(ctx, cfg, namespace, 1)
			}),
	}
}
