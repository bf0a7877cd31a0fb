package harness

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// runManagerChild runs the test binary as a controller-runtime manager
// with its metrics served at $METRICS, as an operator's process is, for
// the scenarios that settle a process by its workqueues: "copier" copies
// each ConfigMap's data.value to data.seen; "drops" is shown the
// ConfigMaps and its predicate drops every one, so that no item ever
// reaches its workqueue; "leader" is the copier under leader election,
// on the Lease copier-lock with a lease of $LEASE seconds, as operators
// run; "lateleader" is that copier with its controller, and so its
// workqueue, made only once it leads, as controller-runtime made them
// before v0.15 (rabbitmq's operator, on v0.8) (testdata/settle). It exits
// 1 on an error.
func runManagerChild(kind string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fail(err)
	}
	ns := os.Getenv("NAMESPACE")
	opts := manager.Options{
		Scheme:                 kscheme.Scheme,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Metrics:                metricsserver.Options{BindAddress: os.Getenv("METRICS")},
		HealthProbeBindAddress: "0",
		Logger:                 logr.Discard(),
	}
	if kind == "leader" || kind == "lateleader" {
		secs, err := strconv.Atoi(os.Getenv("LEASE"))
		if err != nil || secs < 1 {
			fail(fmt.Errorf("LEASE=%q: want a number of seconds, at least 1", os.Getenv("LEASE")))
		}
		lease := time.Duration(secs) * time.Second
		renew, retry := lease*2/3, min(time.Second, lease/6)
		opts.LeaderElection, opts.LeaderElectionID, opts.LeaderElectionNamespace = true, "copier-lock", ns
		opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = &lease, &renew, &retry
	}
	mgr, err := manager.New(cfg, opts)
	if err != nil {
		fail(err)
	}
	keep := predicate.NewPredicateFuncs(func(client.Object) bool { return kind != "drops" })
	c := mgr.GetClient()
	copier := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		var cm corev1.ConfigMap
		if err := c.Get(ctx, req.NamespacedName, &cm); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		if cm.Data["seen"] == cm.Data["value"] {
			return reconcile.Result{}, nil
		}
		cm.Data["seen"] = cm.Data["value"]
		return reconcile.Result{}, c.Update(ctx, &cm)
	})
	if kind == "lateleader" {
		// A runnable that needs leader election starts once the process
		// leads; the controller, and its queue, are made there.
		err = mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			ctl, err := controller.NewUnmanaged("copier", controller.Options{Reconciler: copier})
			if err != nil {
				return err
			}
			if err := ctl.Watch(source.Kind(mgr.GetCache(), &corev1.ConfigMap{}, &handler.TypedEnqueueRequestForObject[*corev1.ConfigMap]{})); err != nil {
				return err
			}
			return ctl.Start(ctx)
		}))
	} else {
		err = builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}, builder.WithPredicates(keep)).Complete(copier)
	}
	if err != nil {
		fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	fmt.Println(kind, "managing configmaps in", ns)
	if err := mgr.Start(ctx); err != nil {
		fail(err)
	}
	fmt.Println("stopped")
}
