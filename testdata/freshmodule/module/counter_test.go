package counter_test

import (
	"testing"

	"github.com/racekit/racekit"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"example.com/counter"
)

func TestMain(m *testing.M) { racekit.Main(m) }

func TestRaces(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := counter.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	racekit.Run(t, racekit.Setup{
		Dir:  "testdata",
		CRDs: []string{"crd"},
		Controllers: []*racekit.Controller{
			racekit.Reconciler("counter", scheme, &counter.Counter{}, func(c client.Client) reconcile.Reconciler {
				return &counter.Reconciler{Client: c, Backoff: racekit.ZeroDelayRetry()}
			}),
		},
	})
}
