// Package testctrl holds the controllers the harness's own tests race:
// small client-go controllers that run on their own, shaped like the
// controllers people write.
package testctrl

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// WatchConfigMaps runs the seer as a client-go controller runs on its own: an
// informer on the namespace's ConfigMaps, a rate-limited workqueue and one
// worker, whose sync copies data.value to data.seen with an update built
// from the lister's copy. A conflict goes back to the queue, and the next
// sync reads the lister again.
func WatchConfigMaps(ctx context.Context, cfg *rest.Config, namespace string) error {
	return runConfigMaps(ctx, cfg, namespace, func(kube kubernetes.Interface, lister corev1listers.ConfigMapLister) syncFunc {
		return func(ctx context.Context, key string) error {
			ns, name, _ := cache.SplitMetaNamespaceKey(key)
			cm, err := lister.ConfigMaps(ns).Get(name)
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil || cm.Data["seen"] == cm.Data["value"] {
				return err
			}
			cm = cm.DeepCopy()
			cm.Data["seen"] = cm.Data["value"]
			_, err = kube.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
			return err
		}
	})
}

// syncFunc syncs the ConfigMap of one namespace/name key.
type syncFunc func(ctx context.Context, key string) error

// runConfigMaps runs a client-go controller of the namespace's ConfigMaps
// until ctx ends, as the test controllers that run on their own share it:
// an informer whose adds and updates go onto a rate-limited workqueue, and
// one worker that calls the sync newSync makes (from the clientset and the
// informer's lister), putting a key that failed back with a rate limit.
func runConfigMaps(ctx context.Context, cfg *rest.Config, namespace string, newSync func(kubernetes.Interface, corev1listers.ConfigMapLister) syncFunc) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace))
	cms := factory.Core().V1().ConfigMaps()
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	enqueue := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			queue.Add(key)
		}
	}
	if _, err := cms.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return err
	}
	sync := newSync(kube, cms.Lister())
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	defer queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), cms.Informer().HasSynced) {
		return ctx.Err()
	}
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		for {
			key, quit := queue.Get()
			if quit {
				return
			}
			if err := sync(ctx, key); err != nil && ctx.Err() == nil {
				queue.AddRateLimited(key)
			} else {
				queue.Forget(key)
			}
			queue.Done(key)
		}
	}, time.Second)
	<-ctx.Done()
	return nil
}

// InformDeployments runs an informer on the namespace's Deployments until
// its context ends, and does nothing with them: what a controller's
// informer lists and watches, on a resource kube-apiserver serves without
// a watch cache here, so that its lists reach etcd.
func InformDeployments(ctx context.Context, cfg *rest.Config, namespace string) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace))
	inf := factory.Apps().V1().Deployments().Informer()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	<-ctx.Done()
	return nil
}

// InformSecrets runs an informer on the namespace's Secrets until its
// context ends, and does nothing with them: a watcher that runs beside a
// workload which writes other things, such as ConfigMaps, and so races
// with none of its writes.
func InformSecrets(ctx context.Context, cfg *rest.Config, namespace string) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace))
	inf := factory.Core().V1().Secrets().Informer()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	<-ctx.Done()
	return nil
}

// Busy reads the namespace's ConfigMaps again and again until its context
// ends: a controller that never goes idle.
func Busy(ctx context.Context, cfg *rest.Config, namespace string) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for ctx.Err() == nil {
		_, _ = kube.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{})
	}
	return nil
}
