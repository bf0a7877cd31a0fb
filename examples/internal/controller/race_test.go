package controller_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/racekit/racekit"

	cachev1alpha1 "github.com/racekit/racekit/examples/api/v1alpha1"
	"github.com/racekit/racekit/examples/internal/controller"
)

// TestMain stops racekit's control plane when the tests end.
func TestMain(m *testing.M) { racekit.Main(m) }

// TestRaces races the tutorial's reconciler and the fixed one against a real
// kube-apiserver, with the scenarios in testdata/races.
func TestRaces(t *testing.T) {
	racekit.Run(t, racekit.Setup{
		Dir:  "testdata/races",
		CRDs: []string{"../../config/crd/bases"},
		Controllers: []*racekit.Controller{
			memcached("tutorial", false), // the tutorial's lost write
			memcached("memcached", true), // the fix: a 409 instead
		},
	})
}

// memcached registers MemcachedReconciler as name. It reads Memcacheds and
// Deployments from informers, as the manager's client does. Scenarios
// reconcile it one step at a time, or start it in a manager of its own,
// as cmd/main.go runs it.
func memcached(name string, optimisticLock bool) *racekit.Controller {
	return racekit.Reconciler(name, scheme, &cachev1alpha1.Memcached{},
		func(c client.Client) reconcile.Reconciler {
			return &controller.MemcachedReconciler{Client: c, Scheme: scheme, OptimisticLock: optimisticLock}
		},
		racekit.Cached(&cachev1alpha1.Memcached{}, &appsv1.Deployment{}),
		racekit.Manages(func(mgr manager.Manager) error {
			r := &controller.MemcachedReconciler{Client: mgr.GetClient(), Scheme: scheme, OptimisticLock: optimisticLock}
			return r.SetupWithManager(mgr)
		}))
}

// scheme knows the built-in kinds and Memcached, as cmd/main.go's does.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(cachev1alpha1.AddToScheme(s))
	return s
}()
