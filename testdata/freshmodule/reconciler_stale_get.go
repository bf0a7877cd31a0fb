package counter

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Reconciler adds one to a Counter's spec.value each time it reconciles
// it: a read-modify-write that must not lose what another writer changed
// in between.
type Reconciler struct {
	Client client.Client
	// Backoff paces the retries of a conflicting update: retry.DefaultRetry
	// in production, and one without delays in a test.
	Backoff wait.Backoff
}

// Reconcile reads the Counter once and retries only the update. This is
// the bug TestFreshModule expects racekit to catch: after a 409 Conflict,
// every retry sends the same stale copy, and the API server refuses each
// one.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var c Counter
	if err := r.Client.Get(ctx, req.NamespacedName, &c); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	c.Spec.Value++
	err := retry.RetryOnConflict(r.Backoff, func() error {
		return r.Client.Update(ctx, &c)
	})
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("add one to counter %s: %w", req.NamespacedName, err)
	}
	return reconcile.Result{}, nil
}
