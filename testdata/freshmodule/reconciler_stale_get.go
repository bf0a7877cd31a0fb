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

// Reconcile reads the Counter and writes it back one higher. A 409
// Conflict means that someone changed the Counter since the read, so every
// attempt starts from a fresh GET.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	err := retry.RetryOnConflict(r.Backoff, func() error {
		var c Counter
		if err := r.Client.Get(ctx, req.NamespacedName, &c); err != nil {
			return err
		}
		c.Spec.Value++
		return r.Client.Update(ctx, &c)
	})
	if err := client.IgnoreNotFound(err); err != nil {
		return reconcile.Result{}, fmt.Errorf("add one to counter %s: %w", req.NamespacedName, err)
	}
	return reconcile.Result{}, nil
}
