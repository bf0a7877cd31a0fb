package controller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/racekit/racekit/controller/api/v1alpha1"
)

// RunOptions configures Run.
type RunOptions struct {
	// Options configures the Reconciler. A nil Metrics means Run makes
	// its own.
	Options
	// Namespace limits the controller to one namespace; empty means all.
	Namespace string
	// Workers is how many WebApps are reconciled at once; zero means one.
	// The queue never hands one key to two workers at once.
	Workers int
	// MetricsAddr, when set, is the address Run serves /metrics on.
	MetricsAddr string
	// RateLimiter spaces the retries of a key whose reconcile failed; nil
	// means workqueue.DefaultTypedControllerRateLimiter.
	RateLimiter workqueue.TypedRateLimiter[types.NamespacedName]
}

// Run runs the controller until ctx is done, then stops its workers and
// informers, waits for them, and returns nil. It logs through the logger
// in ctx (klog.FromContext).
//
// Informers on WebApps and on the Deployments that carry the managed-by
// label only wake the controller up: they put WebApp keys on a
// rate-limited queue. Reconcile itself reads every object with a GET from
// the API server, never from the informers' caches.
func Run(ctx context.Context, cfg *rest.Config, opts RunOptions) error {
	return run(ctx, cfg, opts, New)
}

// run is Run with the Reconciler that build makes: New for Run, a
// teaching variant's for RunTeachingVariant.
func run(ctx context.Context, cfg *rest.Config, opts RunOptions, build func(client.Client, Options) *Reconciler) error {
	log := klog.FromContext(ctx)
	if opts.Workers < 0 {
		return fmt.Errorf("workers must not be negative, got %d", opts.Workers)
	}
	workers := max(opts.Workers, 1)
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics()
	}
	if opts.RateLimiter == nil {
		opts.RateLimiter = workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]()
	}
	c, err := client.New(cfg, client.Options{Scheme: NewScheme()})
	if err != nil {
		return fmt.Errorf("api client: %w", err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("metadata client: %w", err)
	}

	if opts.MetricsAddr != "" {
		_, stop, err := serveMetrics(ctx, opts.MetricsAddr, opts.Metrics)
		if err != nil {
			return err
		}
		defer stop()
	}

	l := &loop{
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(opts.RateLimiter, workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{
			Name: QueueName, MetricsProvider: opts.Metrics.queue,
		}),
		reconcile: build(c, opts.Options).Reconcile,
	}
	defer l.queue.ShutDown()

	webapps := metadatainformer.NewFilteredMetadataInformer(mc, v1alpha1.GroupVersion.WithResource(v1alpha1.Resource),
		opts.Namespace, 0, cache.Indexers{}, nil).Informer()
	deployments := metadatainformer.NewFilteredMetadataInformer(mc, appsv1.SchemeGroupVersion.WithResource("deployments"),
		opts.Namespace, 0, cache.Indexers{}, func(o *metav1.ListOptions) { o.LabelSelector = LabelManagedBy + "=" + ManagedBy }).Informer()
	if _, err := webapps.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    l.enqueue,
		UpdateFunc: func(_, obj any) { l.enqueue(obj) },
	}); err != nil {
		return fmt.Errorf("watch webapps: %w", err)
	}
	if _, err := deployments.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    l.enqueueOwner,
		UpdateFunc: func(_, obj any) { l.enqueueOwner(obj) },
		DeleteFunc: l.enqueueOwner,
	}); err != nil {
		return fmt.Errorf("watch deployments: %w", err)
	}
	// The informers stop when ctx is done; Run waits for them before it
	// returns, so that nothing it started outlives it.
	var informers sync.WaitGroup
	defer informers.Wait()
	informers.Go(func() { webapps.RunWithContext(ctx) })
	informers.Go(func() { deployments.RunWithContext(ctx) })

	log.Info("Starting controller", "namespace", opts.Namespace, "workers", workers, "registration", opts.Registry != nil)
	if !cache.WaitForCacheSync(ctx.Done(), webapps.HasSynced, deployments.HasSynced) {
		return nil // ctx is done: stopped before the caches filled
	}
	l.run(ctx, workers)
	log.Info("Stopped controller")
	return nil
}

// serveMetrics serves m at /metrics on addr until stop is called, and
// returns the address it listens on.
func serveMetrics(ctx context.Context, addr string, m *Metrics) (net.Addr, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("serve metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			klog.FromContext(ctx).Error(err, "Metrics server stopped")
		}
	}()
	klog.FromContext(ctx).Info("Serving metrics", "address", ln.Addr().String())
	return ln.Addr(), func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
	}, nil
}

// loop is the work queue of WebApp keys and what drains it.
type loop struct {
	queue     workqueue.TypedRateLimitingInterface[types.NamespacedName]
	reconcile func(context.Context, types.NamespacedName) error
}

// run starts workers that drain the queue until ctx is done. Then it shuts
// the queue down and returns once every worker has finished its key, so
// that no reconcile is still running when Run returns.
func (l *loop) run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for l.processNextItem(ctx) {
			}
		})
	}
	<-ctx.Done()
	l.queue.ShutDown()
	wg.Wait()
}

// processNextItem reconciles one key from the queue and reports whether the
// queue is still open. A key that reconciled is forgotten by the rate
// limiter; any other key goes back with a delay that grows with each
// failure. That includes ErrStale, whose WebApp changed under the
// reconcile, and the blocks (ErrNotOwned, registry.ErrTaken), which can
// clear without an event the informers would see.
func (l *loop) processNextItem(ctx context.Context) bool {
	key, shutdown := l.queue.Get()
	if shutdown {
		return false
	}
	defer l.queue.Done(key)
	log := klog.FromContext(ctx).WithValues("webapp", klog.KRef(key.Namespace, key.Name))
	err := l.reconcile(ctx, key)
	switch {
	case err == nil:
		l.queue.Forget(key)
		return true
	case ctx.Err() != nil:
		return true // stopping: the queue is shutting down and drops it
	case errors.Is(err, ErrStale):
		log.V(2).Info("WebApp changed during reconcile; requeued", "reason", err.Error())
	default:
		log.Error(err, "Reconcile failed; requeued", "requeues", l.queue.NumRequeues(key))
	}
	l.queue.AddRateLimited(key)
	return true
}

// enqueue adds the key of a WebApp from the informer.
func (l *loop) enqueue(obj any) {
	if key, ok := objectKey(obj); ok {
		l.queue.Add(key)
	}
}

// enqueueOwner adds the key of the WebApp that controls a Deployment from
// the informer, if a WebApp does.
func (l *loop) enqueueOwner(obj any) {
	if key, ok := ownerKey(obj); ok {
		l.queue.Add(key)
	}
}

// objectKey returns the key of an informer's object, which is a tombstone
// when the informer missed the deletion.
func objectKey(obj any) (types.NamespacedName, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	o, ok := obj.(metav1.Object)
	if !ok {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}, true
}

// ownerKey returns the key of the WebApp that controls obj, and false when
// obj is not controlled by a WebApp.
func ownerKey(obj any) (types.NamespacedName, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	o, ok := obj.(metav1.Object)
	if !ok {
		return types.NamespacedName{}, false
	}
	ref := metav1.GetControllerOfNoCopy(o)
	if ref == nil || ref.Kind != v1alpha1.Kind {
		return types.NamespacedName{}, false
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != v1alpha1.GroupVersion.Group {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}, true
}
