package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
)

// watchConfigMaps runs the seer as a client-go controller runs on its own: an
// informer on the namespace's ConfigMaps, a rate-limited workqueue and one
// worker, whose sync copies data.value to data.seen with an update built
// from the lister's copy. A conflict goes back to the queue, and the next
// sync reads the lister again.
func watchConfigMaps(ctx context.Context, cfg *rest.Config, namespace string) error {
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
	lister := cms.Lister()
	sync := func(key string) error {
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
			if err := sync(key); err != nil && ctx.Err() == nil {
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

// busy reads the namespace's ConfigMaps again and again until its context
// ends: a controller that never goes idle.
func busy(ctx context.Context, cfg *rest.Config, namespace string) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for ctx.Err() == nil {
		_, _ = kube.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{})
	}
	return nil
}

// stuck never returns until the test process ends: a Run that ignores its
// context. quits returns at once.
var stuck = make(chan struct{})

// runningControllers are the controllers of testdata/controllers that run
// on their own.
func runningControllers() []*Controller {
	run := func(f func(ctx context.Context, cfg *rest.Config, ns string) error) func(context.Context, *Instance) error {
		return func(ctx context.Context, in *Instance) error { return f(ctx, in.Config, in.Namespace) }
	}
	return []*Controller{
		{Name: "watcher", Scheme: kscheme.Scheme, For: &corev1.ConfigMap{}, Run: run(watchConfigMaps)},
		{Name: "stuck", Scheme: kscheme.Scheme, For: &corev1.ConfigMap{}, Run: func(context.Context, *Instance) error {
			<-stuck
			return nil
		}},
		{Name: "quits", Scheme: kscheme.Scheme, For: &corev1.ConfigMap{}, Run: func(context.Context, *Instance) error {
			return errors.New("no leader lease")
		}},
		{Name: "busy", Scheme: kscheme.Scheme, For: &corev1.ConfigMap{}, Run: run(busy)},
	}
}

// childEnv names what the harness's test binary is when a scenario spawns
// it: the watcher as a process of its own, or one of the faults below.
const childEnv = "RACEKIT_HARNESS_CHILD"

// runChild runs the test binary as the child its environment names, and
// reports whether it was one.
func runChild() bool {
	switch os.Getenv(childEnv) {
	case "":
		return false
	case "watcher":
		// What a controller's main does: a kubeconfig, a namespace, and
		// a context that SIGTERM ends.
		cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		fmt.Println("watching configmaps in", os.Getenv("NAMESPACE"))
		if err := watchConfigMaps(ctx, cfg, os.Getenv("NAMESPACE")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("stopped")
	case "quits":
		fmt.Println("no kubeconfig I like")
		os.Exit(3)
	case "deaf":
		// It ignores SIGTERM, then says so on the wire with one call,
		// which the scenario awaits before it halts it.
		signal.Ignore(syscall.SIGTERM)
		cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		kube, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if _, err := kube.CoreV1().ConfigMaps(os.Getenv("NAMESPACE")).List(context.Background(), metav1.ListOptions{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("SIGTERM? never heard of it")
		never := make(chan os.Signal, 1)
		signal.Notify(never, syscall.SIGUSR1)
		<-never
	default:
		fmt.Fprintf(os.Stderr, "unknown %s=%s\n", childEnv, os.Getenv(childEnv))
		os.Exit(2)
	}
	return true
}

// onPath puts this test binary's folder on PATH, so that scenarios spawn
// it by name (harness.test).
func onPath() {
	if exe, err := os.Executable(); err == nil {
		os.Setenv("PATH", filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
}
