package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/racekit/racekit/controller/api/v1alpha1"
)

// Options configures a Reconciler.
type Options struct {
	// Backoff bounds the conflict retries. The zero value means
	// retry.DefaultRetry. Tests pass the same number of steps with no delay,
	// so that a race replays without waiting.
	Backoff wait.Backoff
}

// Reconciler drives a WebApp's Deployment towards the WebApp's spec.
type Reconciler struct {
	client  client.Client
	backoff wait.Backoff
}

// New returns a Reconciler that talks to the API server through c. c must
// read from the server, not from a cache: every decision is made on a fresh
// GET. Build it with client.New, not from a manager's cached client.
func New(c client.Client, opts Options) *Reconciler {
	b := opts.Backoff
	if b.Steps == 0 {
		b = retry.DefaultRetry
	}
	return &Reconciler{client: c, backoff: b}
}

// Reconcile brings the Deployment of the WebApp named key in line with the
// WebApp's spec. It is synchronous: when it returns, every call it made has
// been answered. A Conflict that outlasts the retries is returned as it is,
// wrapped, so that apierrors.IsConflict still sees it.
func (r *Reconciler) Reconcile(ctx context.Context, key types.NamespacedName) error {
	var app v1alpha1.WebApp
	if err := r.client.Get(ctx, key, &app); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // deleted: its Deployment goes with it through garbage collection
		}
		return fmt.Errorf("reconcile %s: get webapp: %w", key, err)
	}
	if app.DeletionTimestamp != nil {
		return nil
	}
	if err := r.syncDeployment(ctx, &app); err != nil {
		return fmt.Errorf("reconcile %s: %w", key, err)
	}
	return nil
}

// syncDeployment creates the Deployment, or updates it to the replicas and
// image captured in app when this reconcile began. Each attempt reads the
// Deployment again: an attempt that failed with a Conflict knows only that
// its copy is stale, and must not write that copy again.
func (r *Reconciler) syncDeployment(ctx context.Context, app *v1alpha1.WebApp) error {
	key := types.NamespacedName{Namespace: app.Namespace, Name: app.Name}
	replicas, image := app.Spec.Replicas, app.Spec.Image
	err := retry.RetryOnConflict(r.backoff, func() error {
		var dep appsv1.Deployment
		if err := r.client.Get(ctx, key, &dep); err != nil {
			if apierrors.IsNotFound(err) {
				return r.client.Create(ctx, newDeployment(app))
			}
			return err
		}
		if err := checkOwner(&dep, app.UID); err != nil {
			return err
		}
		if !applyTarget(&dep, replicas, image) {
			return nil
		}
		// The error goes back as it is, so that RetryOnConflict sees a
		// Conflict and tries again.
		return r.client.Update(ctx, &dep)
	})
	if err != nil {
		return fmt.Errorf("sync deployment %s: %w", key.Name, err)
	}
	return nil
}
