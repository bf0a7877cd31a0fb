package controller_test

import (
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/racekit/racekit"

	cachev1alpha1 "github.com/racekit/racekit/examples/api/v1alpha1"
	"github.com/racekit/racekit/examples/internal/controller"
)

// BenchmarkCachedAgainstLive plays the flagship race (testdata/bench: a
// Deployment update that gets a genuine 409 from bob, hooked on the
// controller's write, then settle) against the fixed MemcachedReconciler,
// side by side in one run: as TestRaces registers it, reading from
// informers (cached), and built without racekit.Cached, reading from the
// API server (live). Each op is one racekit.Play of the scenario, as a
// user's test runs it on a control plane already up: an untimed Play of
// each before the first op starts the control plane and installs the CRD.
//
// go test runs every -count of one sub-benchmark before the next, so load
// that comes and goes can favour either. The third, pair, plays cached and
// then live in each op and reports cached/live from those same ops.
func BenchmarkCachedAgainstLive(b *testing.B) {
	cached, live := benchSetup(memcached("memcached", true)), benchSetup(memcachedLive("memcached"))
	b.Run("cached", func(b *testing.B) {
		play(b, cached)
		for b.Loop() {
			play(b, cached)
		}
	})
	b.Run("live", func(b *testing.B) {
		play(b, live)
		for b.Loop() {
			play(b, live)
		}
	})
	b.Run("pair", func(b *testing.B) {
		play(b, cached)
		play(b, live)
		var c, l time.Duration
		for b.Loop() {
			start := time.Now()
			play(b, cached)
			mid := time.Now()
			play(b, live)
			c, l = c+mid.Sub(start), l+time.Since(mid)
		}
		b.ReportMetric(float64(c)/float64(l), "cached/live")
		b.ReportMetric(float64(c.Nanoseconds())/float64(b.N), "cached-ns/op")
		b.ReportMetric(float64(l.Nanoseconds())/float64(b.N), "live-ns/op")
	})
}

// benchSetup returns the Setup that plays testdata/bench against c alone.
func benchSetup(c *racekit.Controller) racekit.Setup {
	return racekit.Setup{
		Dir:         "testdata/bench",
		CRDs:        []string{"../../config/crd/bases"},
		Controllers: []*racekit.Controller{c},
	}
}

// play plays s's scenarios once and fails b when one fails.
func play(b *testing.B, s racekit.Setup) {
	b.Helper()
	results, err := racekit.Play(s)
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range results {
		if !r.Passed {
			b.Fatalf("%s failed against %s:\n%s", r.Name, s.Controllers[0].Name, r.Log)
		}
	}
}

// memcachedLive registers the fixed MemcachedReconciler as name, like
// memcached but without racekit.Cached: every read goes to the API server.
func memcachedLive(name string) *racekit.Controller {
	return racekit.Reconciler(name, scheme, &cachev1alpha1.Memcached{},
		func(c client.Client) reconcile.Reconciler {
			return &controller.MemcachedReconciler{Client: c, Scheme: scheme, OptimisticLock: true}
		})
}
