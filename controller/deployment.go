package controller

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/racekit/racekit/controller/api/v1alpha1"
	"github.com/racekit/racekit/controller/teaching"
)

// Labels the controller puts on the Deployments it creates.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "racekit"
)

// ErrNotOwned is returned, wrapped, when the Deployment to update is
// controlled by another object or lacks the managed-by label. It is not a
// conflict, so it is never retried inside a reconcile.
var ErrNotOwned = errors.New("deployment is not controlled by this webapp")

// syncDeployment creates app's Deployment, or updates it to the replicas
// and image of app, the WebApp as this reconcile first read it. Each attempt
// reads the Deployment again: an attempt that failed with a Conflict knows
// only that its copy is stale, and must not write that copy again. It
// reports deleting when the Deployment is being deleted, and then leaves it
// alone.
func (r *Reconciler) syncDeployment(ctx context.Context, app *v1alpha1.WebApp) (deleting bool, err error) {
	key := types.NamespacedName{Namespace: app.Namespace, Name: app.Name}
	replicas, image := app.Spec.Replicas, app.Spec.Image
	read := r.reader(nil)
	err = r.retry(func() error {
		if r.variant.Is(teaching.SideEffectInRetry) {
			// Teaching variant: the side effect repeats with every attempt.
			if _, err := r.register(ctx, app); err != nil {
				return err
			}
		}
		var dep appsv1.Deployment
		if err := read(ctx, key, &dep); err != nil {
			if apierrors.IsNotFound(err) {
				return r.client.Create(ctx, newDeployment(app))
			}
			return err
		}
		if dep.DeletionTimestamp != nil {
			deleting = true
			return nil
		}
		if !r.variant.Is(teaching.NoOwnerCheck) { // teaching variant: touches anything
			if err := checkOwner(&dep, app.UID); err != nil {
				return err
			}
		}
		if !applyTarget(&dep, replicas, image) {
			return nil
		}
		rv := dep.ResourceVersion
		if r.variant.Is(teaching.BlindUpdate) {
			dep.ResourceVersion = "" // teaching variant: an unconditional update
		}
		// The error goes back as it is, so that the retry sees a Conflict
		// and tries again.
		return r.observe(ctx, r.client.Update(ctx, &dep), ResourceDeployments, OpUpdate, rv)
	})
	if err != nil {
		return false, fmt.Errorf("sync deployment %s: %w", key.Name, err)
	}
	return deleting, nil
}

// checkOwner returns nil when dep's controlling owner is the WebApp with uid
// and dep carries the managed-by label. Anything else belongs to someone
// else, and the controller must not touch it.
func checkOwner(dep *appsv1.Deployment, uid types.UID) error {
	ref := metav1.GetControllerOf(dep)
	switch {
	case ref == nil:
		return fmt.Errorf("%w: %s has no controller owner", ErrNotOwned, dep.Name)
	case ref.UID != uid:
		return fmt.Errorf("%w: %s is controlled by %s %s (uid %s)", ErrNotOwned, dep.Name, ref.Kind, ref.Name, ref.UID)
	case dep.Labels[LabelManagedBy] != ManagedBy:
		return fmt.Errorf("%w: %s lacks the label %s=%s", ErrNotOwned, dep.Name, LabelManagedBy, ManagedBy)
	}
	return nil
}

// newDeployment returns the Deployment that app asks for, with a controller
// owner reference to app.
func newDeployment(app *v1alpha1.WebApp) *appsv1.Deployment {
	labels := map[string]string{LabelName: app.Name, LabelManagedBy: ManagedBy}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:      app.Name,
			Namespace: app.Namespace,
			Labels:    labels,
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(app, v1alpha1.GroupVersion.WithKind(v1alpha1.Kind)),
			},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(app.Spec.Replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelName: app.Name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{LabelName: app.Name}},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "web", Image: app.Spec.Image}},
				},
			},
		},
	}
}

// applyTarget sets replicas and image on dep and reports whether anything
// changed, so that an unchanged Deployment is not written at all.
func applyTarget(dep *appsv1.Deployment, replicas int32, image string) bool {
	changed := false
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != replicas {
		dep.Spec.Replicas = &replicas
		changed = true
	}
	if c := dep.Spec.Template.Spec.Containers; len(c) > 0 && c[0].Image != image {
		c[0].Image = image
		changed = true
	}
	return changed
}
