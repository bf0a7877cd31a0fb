package floor

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Run runs the controller against the API server cfg names, for the
// Deployments of one namespace, with the given number of workers. It blocks
// until ctx is done and returns once the workers and the informers have
// stopped: nil on a clean stop, an error when it could not start or ctx was
// done before the informer cache synced. It logs through
// klog.FromContext(ctx).
func Run(ctx context.Context, cfg *rest.Config, namespace string, workers int) error {
	if namespace == "" {
		return errors.New("no namespace given: the controller watches the Deployments of one namespace")
	}
	if workers < 1 {
		return fmt.Errorf("workers is %d, want at least 1", workers)
	}

	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building the kubernetes clientset: %w", err)
	}

	// No resync: a Deployment is synced again only when it changes, or when
	// a sync asks for a retry.
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace))
	controller := NewController(ctx, kube, factory.Apps().V1().Deployments())

	// Start is non-blocking: it runs the informers in their own goroutines
	// until ctx is done. Shutdown waits for them to stop.
	factory.Start(ctx.Done())
	defer factory.Shutdown()

	return controller.Run(ctx, workers)
}
