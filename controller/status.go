package controller

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/racekit/racekit/controller/api/v1alpha1"
	"github.com/racekit/racekit/controller/registry"
	"github.com/racekit/racekit/controller/teaching"
)

// confirm records in status that the Deployment and the registration match
// app, the WebApp as this reconcile first read it.
func (r *Reconciler) confirm(ctx context.Context, app *v1alpha1.WebApp, registration string) error {
	now := metav1.NewTime(r.clock.Now())
	err := r.writeStatus(ctx, app, func(s v1alpha1.WebAppStatus) v1alpha1.WebAppStatus {
		return confirmed(s, app, registration, now)
	})
	if err != nil {
		return fmt.Errorf("confirm status: %w", err)
	}
	return nil
}

// refuse returns err, and when err is a block that a person must clear
// (ErrNotOwned, registry.ErrTaken) it first records the block as the Ready
// condition. Recording is best effort: a stale WebApp records nothing, and
// any other failure is joined to err.
func (r *Reconciler) refuse(ctx context.Context, app *v1alpha1.WebApp, err error) error {
	cond, ok := blockedCondition(err, app.Generation, metav1.NewTime(r.clock.Now()))
	if !ok {
		return err
	}
	serr := r.writeStatus(ctx, app, func(s v1alpha1.WebAppStatus) v1alpha1.WebAppStatus {
		return blocked(s, cond)
	})
	if serr != nil && !errors.Is(serr, ErrStale) {
		return errors.Join(err, fmt.Errorf("record condition %s: %w", cond.Reason, serr))
	}
	return err
}

// writeStatus replaces the WebApp's status with what next makes of it, in a
// conflict retry whose every attempt GETs the WebApp. An attempt stops with
// ErrStale when the WebApp is no longer the one app was read as, and writes
// nothing when next changes nothing.
func (r *Reconciler) writeStatus(ctx context.Context, app *v1alpha1.WebApp, next func(v1alpha1.WebAppStatus) v1alpha1.WebAppStatus) error {
	key := client.ObjectKeyFromObject(app)
	read := r.reader(nil)
	return r.retry(func() error {
		cur := &v1alpha1.WebApp{}
		if err := read(ctx, key, cur); err != nil {
			return err
		}
		if err := r.checkStatusTarget(app, cur); err != nil {
			return err
		}
		status := next(cur.Status)
		if r.variant.Is(teaching.StatusNoGenerationCheck) {
			claimGeneration(&status, cur.Generation) // teaching variant: claims what it just read
		}
		if equality.Semantic.DeepEqual(status, cur.Status) {
			return nil
		}
		cur.Status = status
		rv := cur.ResourceVersion
		return r.observe(ctx, r.client.Status().Update(ctx, cur), ResourceWebApps, OpUpdateStatus, rv)
	})
}

// checkCurrent returns ErrStale, wrapped, when cur, a later read of the
// WebApp, is not the object first was read as: another uid, another
// generation, or a deletion that began. What a reconcile of first concluded
// says nothing about cur.
func checkCurrent(first, cur *v1alpha1.WebApp) error {
	switch {
	case cur.UID != first.UID:
		return fmt.Errorf("%w: uid is %s, was %s", ErrStale, cur.UID, first.UID)
	case cur.Generation != first.Generation:
		return fmt.Errorf("%w: generation is %d, was %d", ErrStale, cur.Generation, first.Generation)
	case cur.DeletionTimestamp != nil && first.DeletionTimestamp == nil:
		return fmt.Errorf("%w: deletion began", ErrStale)
	}
	return nil
}

// confirmed returns status as it reads once a reconcile of app succeeded:
// the generation it observed, the replicas it set, the registration it
// holds, and Ready.
func confirmed(status v1alpha1.WebAppStatus, app *v1alpha1.WebApp, registration string, now metav1.Time) v1alpha1.WebAppStatus {
	out := *status.DeepCopy()
	out.ObservedGeneration = app.Generation
	out.Replicas = app.Spec.Replicas
	out.Registration = registration
	meta.SetStatusCondition(&out.Conditions, metav1.Condition{
		Type:               v1alpha1.ConditionReady,
		Status:             metav1.ConditionTrue,
		Reason:             v1alpha1.ReasonReconciled,
		Message:            fmt.Sprintf("deployment %s runs %d replicas of %s", app.Name, app.Spec.Replicas, app.Spec.Image),
		ObservedGeneration: app.Generation,
		LastTransitionTime: now,
	})
	return out
}

// blocked returns status with cond as its Ready condition. The generation
// of cond is observed: the block applies to that spec. Replicas and
// registration keep what was last confirmed.
func blocked(status v1alpha1.WebAppStatus, cond metav1.Condition) v1alpha1.WebAppStatus {
	out := *status.DeepCopy()
	out.ObservedGeneration = cond.ObservedGeneration
	meta.SetStatusCondition(&out.Conditions, cond)
	return out
}

// blockedCondition returns the Ready condition for err, when err is a block
// that a person must clear, and false for any other error, which says
// nothing lasting about the WebApp.
func blockedCondition(err error, generation int64, now metav1.Time) (metav1.Condition, bool) {
	var reason string
	switch {
	case errors.Is(err, ErrNotOwned):
		reason = v1alpha1.ReasonOwnedByOther
	case errors.Is(err, registry.ErrTaken):
		reason = v1alpha1.ReasonRegistrationTaken
	default:
		return metav1.Condition{}, false
	}
	return metav1.Condition{
		Type:               v1alpha1.ConditionReady,
		Status:             metav1.ConditionFalse,
		Reason:             reason,
		Message:            err.Error(),
		ObservedGeneration: generation,
		LastTransitionTime: now,
	}, true
}
