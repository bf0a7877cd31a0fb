package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/racekit/racekit/controller/api/v1alpha1"
	"github.com/racekit/racekit/controller/teaching"
)

// ensureFinalizer adds the finalizer to app, so that the API server keeps a
// deleted WebApp until its registration is removed. An attempt after a
// conflict reads the WebApp again and stops with ErrStale when it is no
// longer the one app was read as.
func (r *Reconciler) ensureFinalizer(ctx context.Context, app *v1alpha1.WebApp) error {
	if controllerutil.ContainsFinalizer(app, v1alpha1.Finalizer) {
		return nil
	}
	err := r.retryWebApp(ctx, app, func(cur *v1alpha1.WebApp) error {
		if err := checkCurrent(app, cur); err != nil {
			return err
		}
		if !controllerutil.AddFinalizer(cur, v1alpha1.Finalizer) {
			return nil
		}
		rv := cur.ResourceVersion
		return r.observe(ctx, r.client.Update(ctx, cur), ResourceWebApps, OpAddFinalizer, rv)
	})
	if err != nil {
		return fmt.Errorf("add finalizer: %w", err)
	}
	return nil
}

// finalize runs when app is being deleted: it removes app's registration,
// then the finalizer, in that order, so that a failed deregistration keeps
// the WebApp, and the record's owner, visible until it succeeds.
func (r *Reconciler) finalize(ctx context.Context, app *v1alpha1.WebApp) error {
	if !controllerutil.ContainsFinalizer(app, v1alpha1.Finalizer) {
		return nil
	}
	if !r.variant.Is(teaching.FinalizerBeforeCleanup) { // teaching variant: cleans up last
		if err := r.deregister(ctx, app); err != nil {
			return err
		}
	}
	err := r.retryWebApp(ctx, app, func(cur *v1alpha1.WebApp) error {
		if cur.UID != app.UID {
			return nil // the WebApp we finalize is gone; this is a new one
		}
		if !controllerutil.RemoveFinalizer(cur, v1alpha1.Finalizer) {
			return nil
		}
		rv := cur.ResourceVersion
		return r.observe(ctx, r.client.Update(ctx, cur), ResourceWebApps, OpRemoveFinalizer, rv)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizer: %w", err)
	}
	if r.variant.Is(teaching.FinalizerBeforeCleanup) {
		return r.deregister(ctx, app)
	}
	return nil
}
