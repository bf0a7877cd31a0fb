// Package controller holds the Memcached reconciler, which runs one
// Deployment for each Memcached.
package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	cachev1alpha1 "github.com/racekit/racekit/examples/api/v1alpha1"
)

// memcachedFinalizer keeps a deleted Memcached in the API until this
// controller has seen the deletion.
const memcachedFinalizer = "cache.example.com/finalizer"

// typeAvailableMemcached is the condition type that reports whether the
// Deployment for a Memcached exists with the desired number of replicas.
const typeAvailableMemcached = "Available"

// MemcachedReconciler reconciles a Memcached object.
type MemcachedReconciler struct {
	client.Client
	Scheme *runtime.Scheme

	// OptimisticLock makes every JSON merge patch the reconciler sends
	// carry the resourceVersion of the copy it was computed from.
	//
	// Without it the reconciler has the tutorial's lost write. It adds its
	// finalizer with a merge patch computed from the cached Memcached, and a
	// merge patch replaces the whole metadata.finalizers list and carries no
	// resourceVersion. When another writer added its own finalizer after the
	// cache took its copy, the patch silently removes that finalizer, and the
	// API server has no reason to refuse it.
	//
	// OptimisticLock is the fix: with the resourceVersion in the patch, the
	// API server answers 409 Conflict when the object changed since the
	// cached read, Reconcile returns that error, and the request is queued
	// again, to be decided on a fresh copy.
	OptimisticLock bool
}

// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete

// Reconcile moves the cluster towards the state a Memcached asks for: a
// Deployment of the same name, owned by the Memcached, that runs spec.size
// memcached Pods. It reads both objects from the manager's cache, so what it
// reads may be stale; every write it makes must be one the API server can
// refuse when that is so.
func (r *MemcachedReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)

	memcached := &cachev1alpha1.Memcached{}
	if err := r.Get(ctx, req.NamespacedName, memcached); err != nil {
		if apierrors.IsNotFound(err) {
			// The Memcached is gone, and its Deployment goes with it through
			// the owner reference: there is nothing left to do.
			log.Info("Memcached not found; ignoring since it must have been deleted")
			return ctrl.Result{}, nil
		}
		log.Error(err, "Failed to get Memcached")
		return ctrl.Result{}, err
	}

	if !memcached.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, memcached)
	}

	if !controllerutil.ContainsFinalizer(memcached, memcachedFinalizer) {
		log.Info("Adding finalizer")
		// The patch is computed from the cached copy. See OptimisticLock for
		// what this patch does to a finalizer that another writer added after
		// the cache took that copy.
		patch := r.mergeFrom(memcached)
		controllerutil.AddFinalizer(memcached, memcachedFinalizer)
		if err := r.Patch(ctx, memcached, patch); err != nil {
			log.Error(err, "Failed to add finalizer")
			return ctrl.Result{}, err
		}
	}

	found := &appsv1.Deployment{}
	err := r.Get(ctx, types.NamespacedName{Name: memcached.Name, Namespace: memcached.Namespace}, found)
	if apierrors.IsNotFound(err) {
		dep, err := r.deploymentForMemcached(memcached)
		if err != nil {
			log.Error(err, "Failed to define Deployment")
			return ctrl.Result{}, err
		}
		log.Info("Creating Deployment", "Deployment.Namespace", dep.Namespace, "Deployment.Name", dep.Name)
		if err := r.Create(ctx, dep); err != nil {
			log.Error(err, "Failed to create Deployment", "Deployment.Namespace", dep.Namespace, "Deployment.Name", dep.Name)
			return ctrl.Result{}, err
		}
		// The controller watches the Deployments it owns, so the new one
		// brings this Memcached back to Reconcile, which then reports it.
		return ctrl.Result{}, nil
	}
	if err != nil {
		log.Error(err, "Failed to get Deployment")
		return ctrl.Result{}, err
	}

	// r.Get copied the cached Deployment into found, so changing found does
	// not touch the cache. The Update carries found's resourceVersion: when
	// the cache was stale, the API server answers 409 Conflict, and
	// returning that error requeues the request to be decided again.
	size := memcached.Spec.Size
	if found.Spec.Replicas == nil || *found.Spec.Replicas != size {
		log.Info("Scaling Deployment", "from", ptr.Deref(found.Spec.Replicas, 1), "to", size)
		found.Spec.Replicas = ptr.To(size)
		if err := r.Update(ctx, found); err != nil {
			log.Error(err, "Failed to update Deployment", "Deployment.Namespace", found.Namespace, "Deployment.Name", found.Name)
			return ctrl.Result{}, err
		}
	}

	// Status().Update also carries memcached's resourceVersion, so a status
	// computed from a stale Memcached is refused with a 409 Conflict too.
	meta.SetStatusCondition(&memcached.Status.Conditions, metav1.Condition{
		Type:               typeAvailableMemcached,
		Status:             metav1.ConditionTrue,
		Reason:             "Reconciling",
		Message:            fmt.Sprintf("Deployment for custom resource (%s) with %d replicas created successfully", memcached.Name, size),
		ObservedGeneration: memcached.Generation,
	})
	if err := r.Status().Update(ctx, memcached); err != nil {
		log.Error(err, "Failed to update Memcached status")
		return ctrl.Result{}, err
	}

	return ctrl.Result{}, nil
}

// finalize removes the finalizer from a Memcached that is being deleted.
// The Deployment needs no cleanup here: the garbage collector deletes it
// through its owner reference once the Memcached is gone.
func (r *MemcachedReconciler) finalize(ctx context.Context, memcached *cachev1alpha1.Memcached) error {
	if !controllerutil.ContainsFinalizer(memcached, memcachedFinalizer) {
		return nil
	}
	logf.FromContext(ctx).Info("Removing finalizer")
	patch := r.mergeFrom(memcached)
	controllerutil.RemoveFinalizer(memcached, memcachedFinalizer)
	if err := r.Patch(ctx, memcached, patch); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// mergeFrom returns a JSON merge patch whose base is a copy of obj, to be
// sent after obj is changed. With OptimisticLock the patch also carries obj's
// resourceVersion, so the API server refuses it with a 409 Conflict when obj
// is no longer current; without it, the patch is applied to whatever the
// server holds, and replaces lists such as metadata.finalizers whole.
func (r *MemcachedReconciler) mergeFrom(obj *cachev1alpha1.Memcached) client.Patch {
	if r.OptimisticLock {
		return client.MergeFromWithOptions(obj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	}
	return client.MergeFrom(obj.DeepCopy())
}

// deploymentForMemcached returns the Deployment that runs memcached's Pods,
// with memcached set as its controlling owner.
func (r *MemcachedReconciler) deploymentForMemcached(memcached *cachev1alpha1.Memcached) (*appsv1.Deployment, error) {
	ls := labelsForMemcached(memcached.Name)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:      memcached.Name,
			Namespace: memcached.Namespace,
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(memcached.Spec.Size),
			Selector: &metav1.LabelSelector{MatchLabels: ls},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: ls},
				Spec: corev1.PodSpec{
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{
							Type: corev1.SeccompProfileTypeRuntimeDefault,
						},
					},
					Containers: []corev1.Container{{
						Name:            "memcached",
						Image:           "memcached:1.6.26-alpine3.19",
						ImagePullPolicy: corev1.PullIfNotPresent,
						Command:         []string{"memcached", "--memory-limit=64", "-o", "modern", "-v"},
						Ports: []corev1.ContainerPort{{
							Name:          "memcached",
							ContainerPort: memcached.Spec.ContainerPort,
						}},
						SecurityContext: &corev1.SecurityContext{
							RunAsUser:                ptr.To[int64](1001),
							AllowPrivilegeEscalation: ptr.To(false),
							Capabilities: &corev1.Capabilities{
								Drop: []corev1.Capability{"ALL"},
							},
						},
					}},
				},
			},
		},
	}
	// The owner reference lets the garbage collector delete the Deployment
	// with its Memcached, and lets Owns() map Deployment events back to it.
	if err := ctrl.SetControllerReference(memcached, dep, r.Scheme); err != nil {
		return nil, err
	}
	return dep, nil
}

// labelsForMemcached returns the labels that select the Pods of the
// Memcached named name.
func labelsForMemcached(name string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "memcached",
		"app.kubernetes.io/instance":   name,
		"app.kubernetes.io/managed-by": "memcached-controller",
	}
}

// SetupWithManager sets up the controller with the Manager. It watches
// Memcacheds and the Deployments they own.
func (r *MemcachedReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&cachev1alpha1.Memcached{}).
		Owns(&appsv1.Deployment{}).
		Named("memcached").
		Complete(r)
}
