package controller

import (
	"context"
	"errors"

	"k8s.io/klog/v2"

	"github.com/racekit/racekit/controller/api/v1alpha1"
	"github.com/racekit/racekit/controller/registry"
)

// register returns the ID of app's record in the registry, creating the
// record when there is none, or "" when registration is off. It fails with
// registry.ErrTaken when app's name is registered to another uid, such as
// an earlier WebApp of the same name: app must not inherit that record.
func (r *Reconciler) register(ctx context.Context, app *v1alpha1.WebApp) (string, error) {
	if r.registry == nil {
		return "", nil
	}
	rec, err := r.registry.Register(ctx, app.Namespace, app.Name, string(app.UID))
	if err != nil {
		return "", err // already says "register NAMESPACE/NAME: ..."
	}
	return rec.ID, nil
}

// deregister removes app's record, if registration is on. A missing record
// is fine, and so is a name registered to another uid: then app never had
// a record, and the other's record must stay.
func (r *Reconciler) deregister(ctx context.Context, app *v1alpha1.WebApp) error {
	if r.registry == nil {
		return nil
	}
	err := r.registry.Deregister(ctx, app.Namespace, app.Name, string(app.UID))
	if errors.Is(err, registry.ErrTaken) {
		klog.FromContext(ctx).Info("Registration belongs to another uid; nothing of this WebApp's to remove", "uid", app.UID)
		return nil
	}
	return err // nil, or already "deregister NAMESPACE/NAME: ..."
}
