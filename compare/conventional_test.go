package compare

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/racekit/racekit/controller"
	"github.com/racekit/racekit/controller/api/v1alpha1"
	"github.com/racekit/racekit/harness"
)

var cp *harness.ControlPlane

func TestMain(m *testing.M) {
	flag.Parse()
	// This package holds benchmarks alone: a run without -bench (go test
	// ./..., say) has nothing to start a control plane for.
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run())
	}
	// envtest logs through controller-runtime's logger; unset, it warns on
	// stderr after 30 s, in the middle of the benchmark lines.
	ctrllog.SetLogger(logr.Discard())
	var err error
	if cp, err = harness.StartControlPlane(context.Background(), webAppCRD()); err != nil {
		fmt.Fprintf(os.Stderr, "compare: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	cp.Close()
	os.Exit(code)
}

// The conventional test's knobs, at the values such tests typically use.
const (
	pollInterval = 10 * time.Millisecond // Eventually's polling interval
	pollTimeout  = 10 * time.Second      // Eventually's timeout
	provokeAfter = 2 * time.Millisecond  // how long the racing goroutine sleeps before it writes
)

// BenchmarkConventionalFlagship runs the flagship race without hooks, once
// per iteration: scale the WebApp to 2 and, from a goroutine that sleeps
// first, annotate its Deployment, hoping that the annotation lands between
// the controller's read and its write. It reports races/op, the share of
// attempts in which the controller really got a 409 (its conflict counter,
// which counts 409s from the API server), next to ns/op.
func BenchmarkConventionalFlagship(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The controller's log would break the benchmark lines benchstat reads.
	ctx = klog.NewContext(ctx, logr.Discard())
	admin, err := cp.User("compare-admin", "system:masters")
	if err != nil {
		b.Fatal(err)
	}
	c, err := client.New(admin, client.Options{Scheme: controller.NewScheme()})
	if err != nil {
		b.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "compare-"}}
	if err := c.Create(ctx, ns); err != nil {
		b.Fatal(err)
	}
	metrics := controller.NewMetrics()
	done := make(chan error, 1)
	go func() {
		done <- controller.Run(ctx, admin, controller.RunOptions{Namespace: ns.Name, Options: controller.Options{Metrics: metrics}})
	}()

	races := 0
	i := 0
	for b.Loop() {
		i++
		before := metrics.Conflicts("deployments", "update")
		if err := attempt(ctx, c, ns.Name, fmt.Sprintf("web-%d", i)); err != nil {
			b.Fatal(err)
		}
		if metrics.Conflicts("deployments", "update") > before {
			races++
		}
	}
	b.ReportMetric(float64(races)/float64(i), "races/op")
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// attempt is one conventional race test: create, wait for the Deployment,
// then change the spec while a goroutine annotates the Deployment, and
// wait for the outcome.
func attempt(ctx context.Context, c client.Client, ns, name string) error {
	key := types.NamespacedName{Namespace: ns, Name: name}
	app := &v1alpha1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.WebAppSpec{Replicas: 1, Image: "nginx:1.27"}}
	if err := c.Create(ctx, app); err != nil {
		return err
	}
	if err := eventually(ctx, func() bool { return replicas(ctx, c, key) == 1 }); err != nil {
		return fmt.Errorf("%s never got its Deployment: %w", name, err)
	}

	annotated := make(chan error, 1)
	go func() {
		time.Sleep(provokeAfter) // the usual way to "provoke" the race
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"team":"blue"}}}`))
		annotated <- c.Patch(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}, patch)
	}()
	if err := c.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":2}}`))); err != nil {
		return err
	}
	if err := <-annotated; err != nil {
		return err
	}
	return eventually(ctx, func() bool {
		var d appsv1.Deployment
		return c.Get(ctx, key, &d) == nil && d.Spec.Replicas != nil && *d.Spec.Replicas == 2 && d.Annotations["team"] == "blue"
	})
}

func replicas(ctx context.Context, c client.Client, key types.NamespacedName) int32 {
	var d appsv1.Deployment
	if c.Get(ctx, key, &d) != nil || d.Spec.Replicas == nil {
		return -1
	}
	return *d.Spec.Replicas
}

// eventually polls cond every pollInterval until it holds or pollTimeout
// passes, as Gomega's Eventually does.
func eventually(ctx context.Context, cond func() bool) error {
	deadline := time.Now().Add(pollTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("condition not met within %v", pollTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollInterval):
		}
	}
	return nil
}

// webAppCRD installs the reference controller's CRD as the control plane
// starts.
func webAppCRD() harness.StartOption {
	sub, err := fs.Sub(controller.CRDs, "config/crd")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder
	}
	crds, err := harness.ReadCRDsFS(sub)
	if err != nil {
		panic(err) // a test keeps the embedded CRD valid
	}
	return harness.WithCRDs(crds)
}
