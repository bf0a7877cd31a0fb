package racekit_test

import (
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/racekit/racekit"
)

// TestNoiseChangesNoVerdict runs the scenarios of testdata/clientgo and
// testdata/running with and without noise that cannot matter
// (racekit.CheckNoise), as a project's test would: every verdict must be
// the same.
func TestNoiseChangesNoVerdict(t *testing.T) {
	build := func(c client.Client) reconcile.Reconciler { return &seen{c} }
	seenController := racekit.Reconciler("seen", clientgoscheme.Scheme, &corev1.ConfigMap{}, build,
		racekit.Manages(func(mgr manager.Manager) error {
			return builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Complete(build(mgr.GetClient()))
		}))
	for _, s := range []racekit.Setup{
		{Dir: "testdata/clientgo", Controllers: []*racekit.Controller{racekit.ClientGo("copier", clientgoscheme.Scheme, &corev1.ConfigMap{}, newCopier)}},
		{Dir: "testdata/running", Controllers: []*racekit.Controller{seenController}},
	} {
		checks, err := racekit.CheckNoise(s)
		if err != nil {
			t.Fatal(err)
		}
		if len(checks) == 0 {
			t.Fatalf("%s: no scenario", s.Dir)
		}
		for _, c := range checks {
			for _, d := range c.Differences {
				t.Errorf("%s: %s", filepath.Base(c.File), d)
			}
		}
	}
}
