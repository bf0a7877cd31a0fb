package controller

import (
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/racekit/racekit/controller/api/v1alpha1"
)

// Labels the controller puts on the Deployments it creates.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "racekit"
)

// ErrNotOwned is returned, wrapped, when the Deployment to update is
// controlled by another object. It is not a conflict, so it is never retried.
var ErrNotOwned = errors.New("deployment is not controlled by this webapp")

// checkOwner returns nil when dep's controlling owner is the WebApp with uid.
func checkOwner(dep *appsv1.Deployment, uid types.UID) error {
	ref := metav1.GetControllerOf(dep)
	if ref == nil {
		return fmt.Errorf("%w: %s has no controller owner", ErrNotOwned, dep.Name)
	}
	if ref.UID != uid {
		return fmt.Errorf("%w: %s is controlled by %s %s (uid %s)", ErrNotOwned, dep.Name, ref.Kind, ref.Name, ref.UID)
	}
	return nil
}

// newDeployment returns the Deployment that app asks for, with a controller
// owner reference to app.
func newDeployment(app *v1alpha1.WebApp) *appsv1.Deployment {
	labels := map[string]string{LabelName: app.Name, LabelManagedBy: ManagedBy}
	replicas := app.Spec.Replicas
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:      app.Name,
			Namespace: app.Namespace,
			Labels:    labels,
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(app, v1alpha1.GroupVersion.WithKind("WebApp")),
			},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
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

// applyTarget sets the replicas and image that app asks for on dep and
// reports whether anything changed, so that an unchanged Deployment is not
// written at all.
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
