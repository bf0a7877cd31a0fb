package controller

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/racekit/racekit/controller/api/v1alpha1"
	"github.com/racekit/racekit/controller/registry"
	"github.com/racekit/racekit/controller/teaching"
)

// ErrStale is returned, wrapped, when the WebApp changed while a reconcile
// ran: a new generation, a new uid (deleted and created again), or a
// deletion that began. What the reconcile concluded belongs to the WebApp
// it first read, so it confirms nothing in status. It is not a failure: the
// run loop requeues the key, and the next reconcile starts from a fresh read.
var ErrStale = errors.New("webapp changed during reconcile")

// Options configures a Reconciler.
type Options struct {
	// Backoff bounds the conflict retries. The zero value means
	// retry.DefaultRetry. Tests pass the same number of steps with no delay,
	// so that a race replays without waiting.
	Backoff wait.Backoff
	// Registry is the external registry each WebApp is registered with.
	// Nil turns registration off.
	Registry *registry.Client
	// Metrics, when not nil, counts conflicts.
	Metrics *Metrics
	// Clock stamps condition transitions. Nil means the real clock.
	Clock clock.PassiveClock
}

// Reconciler drives a WebApp's registration, Deployment and status towards
// the WebApp's spec.
type Reconciler struct {
	client   client.Client
	backoff  wait.Backoff
	registry *registry.Client
	metrics  *Metrics
	clock    clock.PassiveClock
	// variant is the rule this Reconciler breaks on purpose: none, unless
	// NewTeachingVariant built it.
	variant teaching.Variant
}

// New returns a Reconciler that talks to the API server through c. c must
// read from the server, not from a cache: every decision is made on a fresh
// GET. Build it with client.New, not from a manager's cached client.
func New(c client.Client, opts Options) *Reconciler {
	r := &Reconciler{client: c, backoff: opts.Backoff, registry: opts.Registry, metrics: opts.Metrics, clock: opts.Clock}
	if r.backoff.Steps == 0 {
		r.backoff = retry.DefaultRetry
	}
	if r.clock == nil {
		r.clock = clock.RealClock{}
	}
	return r
}

// Reconcile brings the WebApp named key, its registration, its Deployment
// and its status in line with its spec, in this order:
//
//  1. Read the WebApp. If it is gone, stop. If it is being deleted,
//     deregister it, remove the finalizer, and stop.
//  2. Ensure the finalizer.
//  3. Register the WebApp with the registry, if there is one.
//  4. Create or update the Deployment.
//  5. Confirm, in status, what steps 3 and 4 achieved.
//
// Every step acts on the spec and uid of the first read, never on a later
// one. Reconcile is synchronous: when it returns, every call it made has
// been answered. A Conflict that outlasts the retries is returned wrapped,
// so that apierrors.IsConflict still sees it. ErrStale, ErrNotOwned and
// registry.ErrTaken are returned wrapped too; the last two also set the
// Ready condition to False with reason OwnedByOther or RegistrationTaken.
func (r *Reconciler) Reconcile(ctx context.Context, key types.NamespacedName) error {
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("webapp", klog.KRef(key.Namespace, key.Name)))
	app := &v1alpha1.WebApp{}
	if err := r.client.Get(ctx, key, app); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // gone: its Deployment goes with it through garbage collection
		}
		return fmt.Errorf("reconcile %s: get webapp: %w", key, err)
	}
	if app.DeletionTimestamp != nil {
		if err := r.finalize(ctx, app); err != nil {
			return fmt.Errorf("reconcile %s: %w", key, err)
		}
		return nil
	}
	// From here on app is the WebApp as this reconcile first read it. It is
	// never changed: every write works on a copy or on a fresh read.
	if err := r.ensureFinalizer(ctx, app); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reconcile %s: %w", key, err)
	}
	// Registration runs once per reconcile, outside any retry: the registry
	// is idempotent by name and uid, so the record is created once per
	// WebApp lifetime however many conflicts follow.
	reg, err := r.register(ctx, app)
	if err != nil {
		return r.refuse(ctx, app, fmt.Errorf("reconcile %s: %w", key, err))
	}
	deleting, err := r.syncDeployment(ctx, app)
	if err != nil {
		return r.refuse(ctx, app, fmt.Errorf("reconcile %s: %w", key, err))
	}
	if deleting {
		// The Deployment's deletion event brings the WebApp back to the
		// queue, and the next reconcile creates a new one.
		klog.FromContext(ctx).V(2).Info("Deployment is being deleted; leaving it alone")
		return nil
	}
	if err := r.confirm(ctx, app, reg); err != nil {
		return fmt.Errorf("reconcile %s: %w", key, err)
	}
	return nil
}

// retryWebApp runs attempt on a copy of app and, after each conflict, on a
// fresh GET of it: a conflict says only that the copy is stale, and a stale
// copy is never written twice. The attempt's error goes back to the retry
// as it is.
func (r *Reconciler) retryWebApp(ctx context.Context, app *v1alpha1.WebApp, attempt func(cur *v1alpha1.WebApp) error) error {
	key := client.ObjectKeyFromObject(app)
	cur := app.DeepCopy()
	read := r.reader(app)
	return r.retry(func() error {
		if cur == nil {
			cur = &v1alpha1.WebApp{}
			if err := read(ctx, key, cur); err != nil {
				return err
			}
		}
		err := attempt(cur)
		cur = nil
		return err
	})
}
