package floor_test

import (
	"context"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/racekit/racekit"

	"github.com/racekit/racekit/examples/floor"
)

// TestNoiseChangesNoVerdict runs the replica-floor controller's scenarios,
// in this process and as a process of its own, with and without noise that
// cannot matter (racekit.CheckNoise): every verdict must be the same.
func TestNoiseChangesNoVerdict(t *testing.T) {
	checks, err := racekit.CheckNoise(racekit.Setup{
		Dir: "testdata/running",
		Controllers: []*racekit.Controller{
			racekit.Runner("floor", clientgoscheme.Scheme, &appsv1.Deployment{},
				func(ctx context.Context, cfg *rest.Config, namespace string) error {
					return floor.Run(ctx, cfg, namespace, 1)
				}),
		},
	})
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
