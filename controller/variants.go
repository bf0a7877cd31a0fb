package controller

import (
	"context"
	"math"
	"reflect"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/racekit/racekit/controller/api/v1alpha1"
	"github.com/racekit/racekit/controller/teaching"
)

// NewTeachingVariant returns a Reconciler like New's that breaks, on
// purpose, the one rule that v names, so that a race scenario can show what
// the rule is for and the scenario catalogue can prove that it notices.
// It is for the racekit harness and for teaching: New and Run never build a
// variant, and the zero Variant gives New's Reconciler.
//
// The variants change the controller in a few marked places: the retry
// (retry), how an attempt reads (reader), the status check
// (checkStatusTarget), and branches in deployment.go, status.go and
// finalizer.go that name their variant. A production Reconciler takes the production path at
// each.
func NewTeachingVariant(c client.Client, opts Options, v teaching.Variant) *Reconciler {
	r := New(c, opts)
	r.variant = v
	return r
}

// RunTeachingVariant runs the controller as Run does (informers, a
// rate-limited workqueue, workers), with the Reconciler of the teaching
// variant v, so that a race that needs the controller running on its own
// (explore auto's restarts, stale views and hidden states) can show what
// the rule v breaks is for. Like NewTeachingVariant it is for the racekit
// harness and for teaching: Run never runs a variant.
func RunTeachingVariant(ctx context.Context, cfg *rest.Config, opts RunOptions, v teaching.Variant) error {
	return run(ctx, cfg, opts, func(c client.Client, o Options) *Reconciler {
		r := New(c, o)
		r.variant = v
		return r
	})
}

// Variant returns the teaching variant r was built as: the zero Variant,
// which breaks no rule, unless NewTeachingVariant built r.
func (r *Reconciler) Variant() teaching.Variant { return r.variant }

// retry runs fn until it succeeds, fails with an error that is not a
// Conflict, or has run r.backoff.Steps times: retry.RetryOnConflict. The
// teaching variant unbounded-retry drops the bound; retry-everything
// retries every error.
func (r *Reconciler) retry(fn func() error) error {
	switch {
	case r.variant.Is(teaching.UnboundedRetry):
		b := r.backoff
		b.Steps = math.MaxInt32
		return retry.OnError(b, apierrors.IsConflict, fn)
	case r.variant.Is(teaching.RetryEverything):
		return retry.OnError(r.backoff, func(error) bool { return true }, fn)
	}
	return retry.RetryOnConflict(r.backoff, fn)
}

// readFunc reads the object key into obj, as client.Client.Get does.
type readFunc func(ctx context.Context, key client.ObjectKey, obj client.Object) error

// reader returns how the attempts of one retry read their object: each
// with a GET from the API server. The teaching variants read only once:
// later attempts get a copy of kept, the object read before (or first, when
// kept is nil), as it was; rv-plus-one adds one to its resourceVersion for
// each attempt instead of reading again.
func (r *Reconciler) reader(kept client.Object) readFunc {
	if !r.variant.Is(teaching.StaleObject) && !r.variant.Is(teaching.RVPlusOne) {
		return func(ctx context.Context, key client.ObjectKey, obj client.Object) error {
			return r.client.Get(ctx, key, obj)
		}
	}
	if kept != nil {
		kept = kept.DeepCopyObject().(client.Object)
	}
	return func(ctx context.Context, key client.ObjectKey, obj client.Object) error {
		if kept == nil {
			if err := r.client.Get(ctx, key, obj); err != nil {
				return err
			}
			kept = obj.DeepCopyObject().(client.Object)
			return nil
		}
		if r.variant.Is(teaching.RVPlusOne) {
			n, _ := strconv.ParseInt(kept.GetResourceVersion(), 10, 64)
			kept.SetResourceVersion(strconv.FormatInt(n+1, 10))
		}
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(kept.DeepCopyObject()).Elem())
		return nil
	}
}

// checkStatusTarget is checkCurrent for a status write. The teaching
// variant status-no-generation-check takes the generation it reads now for
// the one the reconcile acted on, so it never notices a new one.
func (r *Reconciler) checkStatusTarget(first, cur *v1alpha1.WebApp) error {
	if r.variant.Is(teaching.StatusNoGenerationCheck) {
		first = first.DeepCopy()
		first.Generation = cur.Generation
	}
	return checkCurrent(first, cur)
}

// claimGeneration is what status-no-generation-check does to a status
// before it writes it: it claims the generation it last read, whatever the
// spec its conclusions came from.
func claimGeneration(status *v1alpha1.WebAppStatus, generation int64) {
	status.ObservedGeneration = generation
	for i := range status.Conditions {
		status.Conditions[i].ObservedGeneration = generation
	}
}
