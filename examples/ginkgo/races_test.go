package ginkgo_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/match"

	cachev1alpha1 "github.com/racekit/racekit/examples/api/v1alpha1"
	"github.com/racekit/racekit/examples/internal/controller"
)

// The races' controllers read Memcacheds through the client-go scheme
// while Ginkgo builds its tree (Setup.Runs), before BeforeSuite adds the
// project's types to it as the scaffold does; adding them twice is no
// harm.
func init() {
	utilruntime.Must(cachev1alpha1.AddToScheme(scheme.Scheme))
}

// crds are the project's CRDs, as the scaffold's envtest reads them.
var crds = []string{"../config/crd/bases"}

// races is what BeforeSuite starts: the races of internal/controller's
// plain go test, here one spec each, against the tutorial's reconciler and
// the fixed one. A scenario's log and timeline go to GinkgoWriter, which
// Ginkgo shows with a failed spec.
var races = racekit.Setup{
	Dir:  "../internal/controller/testdata/races",
	CRDs: crds,
	Controllers: []*racekit.Controller{
		memcached("tutorial", false), // the tutorial's lost write
		memcached("memcached", true), // the fix: a 409 instead
	},
	Output: GinkgoWriter,
}

// outcome is the scenario that asserts only the outcome (bob's finalizer
// survives the first reconcile), against the one controller given.
func outcome(c *racekit.Controller) racekit.Setup {
	return racekit.Setup{Dir: "../internal/controller/testdata/outcome", CRDs: crds,
		Controllers: []*racekit.Controller{c}, Output: GinkgoWriter}
}

// Ginkgo builds its tree before BeforeSuite runs, so the entries are read
// from the Setup, not from the Env: a scenario is an entry, and an
// exploration's each run is one (Runs plays its learning run to list them,
// on the control plane BeforeSuite's Start then joins).
var _ = Describe("Memcached races", func() {
	names, err := races.Scenarios()
	if err != nil {
		panic(err) // Ginkgo reports a panic while it builds the tree with its location
	}
	entries := []TableEntry{}
	for _, name := range names {
		runs, err := races.Runs(name)
		if err != nil {
			panic(err)
		}
		if runs == nil {
			entries = append(entries, Entry(name, name, ""))
		}
		for _, run := range runs {
			entries = append(entries, Entry(name+"/"+run, name, run))
		}
	}
	DescribeTable("each scenario does what its file says",
		func(name, run string) {
			if run == "" {
				Expect(env.Play(name)).To(match.Pass())
				return
			}
			Expect(env.PlayRun(name, run)).To(match.Pass())
		},
		entries,
	)
})

var _ = Describe("The tutorial's lost finalizer", Ordered, func() {
	var tutorial, fixed *racekit.Env
	BeforeAll(func() {
		var err error
		tutorial, err = racekit.Start(outcome(memcached("tutorial", false)))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(tutorial.Stop)
		fixed, err = racekit.Start(outcome(memcached("memcached", true)))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(fixed.Stop)
	})

	It("is found in the tutorial's reconciler: bob's finalizer is lost", func() {
		Expect(tutorial.Play("finalizer_survives")).To(
			match.FailAt(`field memcacheds/cache metadata.finalizers ["bob.example.com/finalizer","cache.example.com/finalizer"]`).
				Saw(`["cache.example.com/finalizer"]`))
	})

	It("is gone with the fix: the patch carries its resourceVersion", func() {
		Expect(fixed.Play("finalizer_survives")).To(match.Pass())
	})
})

// memcached registers MemcachedReconciler as name, reading Memcacheds and
// Deployments from informers and running in a manager, as cmd/main.go runs
// it (internal/controller's race_test.go registers it the same way).
func memcached(name string, optimisticLock bool) *racekit.Controller {
	return racekit.Reconciler(name, scheme.Scheme, &cachev1alpha1.Memcached{},
		func(c client.Client) reconcile.Reconciler {
			return &controller.MemcachedReconciler{Client: c, Scheme: scheme.Scheme, OptimisticLock: optimisticLock}
		},
		racekit.Cached(&cachev1alpha1.Memcached{}, &appsv1.Deployment{}),
		racekit.Manages(func(mgr manager.Manager) error {
			r := &controller.MemcachedReconciler{Client: mgr.GetClient(), Scheme: scheme.Scheme, OptimisticLock: optimisticLock}
			return r.SetupWithManager(mgr)
		}))
}
