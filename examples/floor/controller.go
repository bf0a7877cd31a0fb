package floor

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

const (
	// MinReplicasAnnotation holds a Deployment's replica floor, a
	// non-negative integer.
	MinReplicasAnnotation = "floor.example.com/min-replicas"
	// RaisedFromAnnotation records the replicas a Deployment had before
	// this controller raised it to its floor.
	RaisedFromAnnotation = "floor.example.com/raised-from"
	// FieldManager distinguishes this controller from other things writing
	// to Deployments.
	FieldManager = "replica-floor"
)

// Controller raises the replicas of annotated Deployments to their floor.
type Controller struct {
	// kube is a standard kubernetes clientset.
	kube kubernetes.Interface

	deploymentsLister appslisters.DeploymentLister
	deploymentsSynced cache.InformerSynced

	// workqueue is a rate limited work queue. Work is queued instead of done
	// as soon as a change happens, so that a fixed number of workers
	// process Deployments and no Deployment is processed by two workers at
	// the same time.
	workqueue workqueue.TypedRateLimitingInterface[cache.ObjectName]
}

// NewController returns a Controller that watches the Deployments of the
// given informer. The informer's factory must be started by the caller.
func NewController(ctx context.Context, kube kubernetes.Interface, deployments appsinformers.DeploymentInformer) *Controller {
	logger := klog.FromContext(ctx)

	c := &Controller{
		kube:              kube,
		deploymentsLister: deployments.Lister(),
		deploymentsSynced: deployments.Informer().HasSynced,
		workqueue: workqueue.NewTypedRateLimitingQueue(
			workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
		),
	}

	logger.Info("Setting up event handlers")
	// A deleted Deployment needs nothing from us, so there is no delete
	// handler.
	_, err := deployments.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueDeployment,
		UpdateFunc: func(old, new interface{}) {
			newDepl := new.(*appsv1.Deployment)
			oldDepl := old.(*appsv1.Deployment)
			if newDepl.ResourceVersion == oldDepl.ResourceVersion {
				// Periodic resync will send update events for all known
				// Deployments. Two different versions of the same
				// Deployment will always have different RVs.
				return
			}
			c.enqueueDeployment(new)
		},
	})
	if err != nil {
		// AddEventHandler fails only when the informer has already been
		// stopped; the controller then never sees an event.
		utilruntime.HandleErrorWithContext(ctx, err, "Adding the Deployment event handler")
	}

	return c
}

// Run waits for the informer cache to sync, then starts workers. It blocks
// until ctx is done, then shuts the workqueue down and returns once every
// worker has stopped. It returns nil on a clean stop, and an error when ctx
// was done before the cache synced.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	defer c.workqueue.ShutDown()
	logger := klog.FromContext(ctx)

	logger.Info("Starting replica floor controller")

	// Wait for the cache to be synced before starting workers: a worker
	// reads every Deployment from the lister.
	if ok := cache.WaitForNamedCacheSyncWithContext(ctx, c.deploymentsSynced); !ok {
		return fmt.Errorf("stopped before the Deployment cache synced: %w", context.Cause(ctx))
	}

	logger.Info("Starting workers", "count", workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			wait.UntilWithContext(ctx, c.runWorker, time.Second)
		})
	}

	logger.Info("Started workers")
	<-ctx.Done()
	logger.Info("Shutting down workers")
	// Shutting the queue down ends each worker's loop once the queue is
	// empty; wait.UntilWithContext then sees ctx done and returns.
	c.workqueue.ShutDown()
	wg.Wait()
	logger.Info("Workers stopped")

	return nil
}

// runWorker is a long-running function that will continually call
// processNextWorkItem to read and process an item on the workqueue.
func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// processNextWorkItem reads a single item off the workqueue and processes
// it by calling syncHandler. It returns false when the queue is shut down.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	objRef, shutdown := c.workqueue.Get()
	if shutdown {
		return false
	}

	// We call Done at the end of this func so the workqueue knows we have
	// finished processing this item. We also must remember to call Forget
	// if we do not want this item requeued: a transient error puts the item
	// back on the workqueue, to be tried again after a back-off period.
	defer c.workqueue.Done(objRef)

	err := c.syncHandler(ctx, objRef)
	if err == nil {
		// Forget the item so that its back-off starts over; it is queued
		// again on the next change.
		c.workqueue.Forget(objRef)
		return true
	}
	// A 409 Conflict lands here too: another writer changed the Deployment
	// after the informer cached the copy we started from. Requeueing is the
	// correct answer to it, because the next sync reads the lister again
	// and decides on the newer copy.
	utilruntime.HandleErrorWithContext(ctx, err, "Error syncing; requeuing for later retry", "objectReference", objRef)
	c.workqueue.AddRateLimited(objRef)
	return true
}

// syncHandler raises the Deployment named by objectRef to its replica floor
// when it is below it. It returns an error only for a problem a retry can
// fix; permanent problems are logged and absorbed.
func (c *Controller) syncHandler(ctx context.Context, objectRef cache.ObjectName) error {
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "deployment", objectRef)

	deployment, err := c.deploymentsLister.Deployments(objectRef.Namespace).Get(objectRef.Name)
	if err != nil {
		// The Deployment may no longer exist, in which case there is
		// nothing to raise.
		if apierrors.IsNotFound(err) {
			logger.Info("Deployment no longer exists; nothing to do")
			return nil
		}
		return err
	}

	value, ok := deployment.Annotations[MinReplicasAnnotation]
	if !ok {
		logger.Info("No replica floor; nothing to do")
		return nil
	}
	floor, err := parseFloor(value)
	if err != nil {
		// We choose to absorb the error here, as the worker would requeue
		// the Deployment otherwise and no retry can fix the value. The
		// next change to the Deployment queues it again.
		utilruntime.HandleErrorWithContext(ctx, err, "Invalid replica floor; dropping until the Deployment changes",
			"deployment", objectRef, "annotation", MinReplicasAnnotation)
		return nil
	}

	replicas := int32(1)
	if deployment.Spec.Replicas != nil {
		replicas = *deployment.Spec.Replicas
	}
	if replicas >= floor {
		logger.Info("Replicas at or above the floor; nothing to do", "replicas", replicas, "floor", floor)
		return nil
	}

	// NEVER modify objects from the store. It's a read-only, local cache.
	// The copy keeps the lister's resourceVersion, so the API server
	// refuses the Update with 409 Conflict if another writer changed the
	// Deployment since: we never overwrite a change we have not seen.
	deploymentCopy := deployment.DeepCopy()
	deploymentCopy.Spec.Replicas = &floor
	if deploymentCopy.Annotations == nil {
		deploymentCopy.Annotations = map[string]string{}
	}
	deploymentCopy.Annotations[RaisedFromAnnotation] = strconv.Itoa(int(replicas))

	_, err = c.kube.AppsV1().Deployments(deployment.Namespace).Update(ctx, deploymentCopy, metav1.UpdateOptions{FieldManager: FieldManager})
	if err != nil {
		// Return the API error as it is; processNextWorkItem requeues the
		// Deployment, for a conflict as for a transient failure.
		return err
	}
	logger.Info("Raised replicas to the floor", "from", replicas, "to", floor, "resourceVersion", deployment.ResourceVersion)
	return nil
}

// parseFloor reads the value of MinReplicasAnnotation.
func parseFloor(value string) (int32, error) {
	n, err := strconv.ParseInt(value, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not an integer", MinReplicasAnnotation, value)
	}
	if n < 0 {
		return 0, fmt.Errorf("%s: %q is negative", MinReplicasAnnotation, value)
	}
	return int32(n), nil
}

// enqueueDeployment puts the namespace/name of a Deployment onto the
// workqueue. It must only be passed Deployments.
func (c *Controller) enqueueDeployment(obj interface{}) {
	objectRef, err := cache.ObjectToName(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.workqueue.Add(objectRef)
}
