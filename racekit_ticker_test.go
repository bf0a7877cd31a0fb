package racekit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The ticker is an operator as many are written: a controller-runtime
// manager that reconciles every second whether or not anything changed
// (RequeueAfter), and serves its metrics on a fixed port it has no flag
// for. Its bug is a blind update: it writes the ConfigMap as it wants it,
// built afresh, with no resourceVersion, so whatever another writer added
// (an annotation) is lost, and no 409 can warn it. The test binary runs it as a
// child program when RACEKIT_TEST_CHILD=ticker.
const (
	childEnv    = "RACEKIT_TEST_CHILD"
	tickerChild = "ticker"
	// tickerMetrics is the ticker's fixed metrics address.
	tickerMetrics = "127.0.0.1:47931"
)

// runChild runs the child program the environment names, if any, and
// reports whether it did.
func runChild() bool {
	switch os.Getenv(childEnv) {
	case tickerChild:
		if err := runTicker(); err != nil {
			fmt.Fprintln(os.Stderr, "ticker:", err)
			os.Exit(1)
		}
		return true
	}
	return false
}

// onPath puts the test binary on PATH, so that a scenario spawns it by
// name (spawn ticker ... -- racekit.test).
func onPath() {
	if exe, err := os.Executable(); err == nil {
		os.Setenv("PATH", filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
}

// metricsAddr is where the ticker serves its metrics: its fixed port,
// unless TICKER_METRICS moves it (the poller's scenario gives it a free
// one).
func metricsAddr() string {
	if v := os.Getenv("TICKER_METRICS"); v != "" {
		return v
	}
	return tickerMetrics
}

// runTicker runs the ticker against $KUBECONFIG in $NAMESPACE until
// SIGTERM.
func runTicker() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return err
	}
	ns := os.Getenv("NAMESPACE")
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:                 scheme.Scheme,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Metrics:                metricsserver.Options{BindAddress: metricsAddr()},
		HealthProbeBindAddress: "0",
		Logger:                 logr.Discard(),
	})
	if err != nil {
		return err
	}
	// TICKER_PERIOD sets how often it reconciles (1s unless set), and
	// TICKER_LIVE=1 makes each reconcile read the ConfigMap from the API
	// server, not its cache: a poller that is never quiet on the wire.
	period := time.Second
	if v := os.Getenv("TICKER_PERIOD"); v != "" {
		if period, err = time.ParseDuration(v); err != nil {
			return err
		}
	}
	var reader client.Reader = mgr.GetClient()
	if os.Getenv("TICKER_LIVE") == "1" {
		reader = mgr.GetAPIReader()
	}
	err = ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("ticker").
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			return tick(ctx, reader, mgr.GetClient(), req, period)
		}))
	if err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

// tick copies data.value to data.seen, read with r and written with c,
// and asks to be called again after period, as operators that poll do.
func tick(ctx context.Context, r client.Reader, c client.Client, req reconcile.Request, period time.Duration) (reconcile.Result, error) {
	again := reconcile.Result{RequeueAfter: period}
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return again, client.IgnoreNotFound(err)
	}
	if cm.Data["value"] == "" || cm.Data["seen"] == cm.Data["value"] {
		return again, nil
	}
	// The bug: the object built afresh carries no resourceVersion, so
	// the write cannot get a 409, and it drops what others added.
	out := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: cm.Namespace},
		Data: map[string]string{"value": cm.Data["value"], "seen": cm.Data["value"]}}
	if err := c.Update(ctx, out); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	return again, nil
}
