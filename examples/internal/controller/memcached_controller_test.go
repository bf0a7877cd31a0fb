package controller

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	cachev1alpha1 "github.com/racekit/racekit/examples/api/v1alpha1"
)

// TestFinalizerPatch checks the body of the patch that adds the finalizer.
// Without OptimisticLock it names the whole finalizer list as the cached
// copy had it, and no resourceVersion: the API server replaces its list with
// this one, whatever was added since. With OptimisticLock the patch also
// carries the cached resourceVersion, which the server checks.
func TestFinalizerPatch(t *testing.T) {
	cached := &cachev1alpha1.Memcached{
		ObjectMeta: metav1.ObjectMeta{
			Name:            "cache",
			Namespace:       "default",
			ResourceVersion: "7",
			Finalizers:      []string{"first.example.com/finalizer"},
		},
	}
	for _, tc := range []struct {
		optimisticLock bool
		want           string
	}{
		{false, `{"metadata":{"finalizers":["first.example.com/finalizer","cache.example.com/finalizer"]}}`},
		{true, `{"metadata":{"finalizers":["first.example.com/finalizer","cache.example.com/finalizer"],"resourceVersion":"7"}}`},
	} {
		r := &MemcachedReconciler{OptimisticLock: tc.optimisticLock}
		memcached := cached.DeepCopy()
		patch := r.mergeFrom(memcached)
		controllerutil.AddFinalizer(memcached, memcachedFinalizer)
		data, err := patch.Data(memcached)
		if err != nil {
			t.Fatalf("OptimisticLock=%t: %v", tc.optimisticLock, err)
		}
		if patch.Type() != types.MergePatchType {
			t.Errorf("OptimisticLock=%t: patch type %s, want %s", tc.optimisticLock, patch.Type(), types.MergePatchType)
		}
		if string(data) != tc.want {
			t.Errorf("OptimisticLock=%t: patch\n got %s\nwant %s", tc.optimisticLock, data, tc.want)
		}
	}
}

// TestReconcile follows one Memcached through its life, and checks the
// calls each Reconcile makes, in order, and the state it leaves behind.
func TestReconcile(t *testing.T) {
	ctx := context.Background()
	scheme := newScheme(t)
	memcached := &cachev1alpha1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "default"},
		Spec:       cachev1alpha1.MemcachedSpec{Size: 3, ContainerPort: 11211},
	}
	c, calls := recordingClient(scheme, memcached)
	r := &MemcachedReconciler{Client: c, Scheme: scheme, OptimisticLock: true}
	key := client.ObjectKeyFromObject(memcached)

	reconcile := func(step string, want ...string) {
		t.Helper()
		*calls = nil
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
			t.Fatalf("%s: Reconcile: %v", step, err)
		}
		if !slices.Equal(*calls, want) {
			t.Fatalf("%s: calls\n got %s\nwant %s", step, strings.Join(*calls, ", "), strings.Join(want, ", "))
		}
	}

	// A new Memcached gets the finalizer and a Deployment.
	reconcile("new Memcached",
		"get memcacheds", "patch memcacheds", "get deployments", "create deployments")
	got := &cachev1alpha1.Memcached{}
	if err := c.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if !controllerutil.ContainsFinalizer(got, memcachedFinalizer) {
		t.Errorf("finalizers = %v, want %s", got.Finalizers, memcachedFinalizer)
	}
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, key, dep); err != nil {
		t.Fatal(err)
	}
	if owner := metav1.GetControllerOf(dep); owner == nil || owner.UID != got.UID || owner.Kind != "Memcached" {
		t.Errorf("Deployment controller reference = %+v, want Memcached %s", owner, got.UID)
	}
	if *dep.Spec.Replicas != 3 {
		t.Errorf("Deployment replicas = %d, want 3", *dep.Spec.Replicas)
	}
	container := dep.Spec.Template.Spec.Containers[0]
	if container.Image != "memcached:1.6.26-alpine3.19" || container.Ports[0].ContainerPort != 11211 {
		t.Errorf("container image %s port %d, want memcached:1.6.26-alpine3.19 port 11211", container.Image, container.Ports[0].ContainerPort)
	}

	// Once the Deployment exists, Reconcile only reports it.
	reconcile("Deployment exists",
		"get memcacheds", "get deployments", "update memcacheds/status")
	if err := c.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	cond := meta.FindStatusCondition(got.Status.Conditions, typeAvailableMemcached)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.ObservedGeneration != got.Generation {
		t.Errorf("Available condition = %+v, want True for generation %d", cond, got.Generation)
	}

	// A new size scales the Deployment.
	got.Spec.Size = 4
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	reconcile("size changed",
		"get memcacheds", "get deployments", "update deployments", "update memcacheds/status")
	if err := c.Get(ctx, key, dep); err != nil {
		t.Fatal(err)
	}
	if *dep.Spec.Replicas != 4 {
		t.Errorf("Deployment replicas = %d, want 4", *dep.Spec.Replicas)
	}

	// Deleting the Memcached removes the finalizer, and then it is gone.
	if err := c.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	reconcile("Memcached deleted", "get memcacheds", "patch memcacheds")
	if err := c.Get(ctx, key, got); !apierrors.IsNotFound(err) {
		t.Errorf("Get after the finalizer was removed: err = %v, want NotFound", err)
	}
	reconcile("Memcached gone", "get memcacheds")
}

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := cachev1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

// recordingClient returns a fake client holding objs, and the list of the
// calls made through it, each as "verb resource", such as "get deployments"
// or "update memcacheds/status".
func recordingClient(scheme *runtime.Scheme, objs ...client.Object) (client.Client, *[]string) {
	calls := new([]string)
	record := func(verb string, obj client.Object, subresource string) {
		resource := "unknown"
		if gvk, err := apiutil.GVKForObject(obj, scheme); err == nil {
			plural, _ := meta.UnsafeGuessKindToResource(gvk)
			resource = plural.Resource
		}
		if subresource != "" {
			resource += "/" + subresource
		}
		*calls = append(*calls, verb+" "+resource)
	}
	c := fake.NewClientBuilder().
		WithScheme(scheme).
		WithObjects(objs...).
		WithStatusSubresource(&cachev1alpha1.Memcached{}).
		WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				record("get", obj, "")
				return c.Get(ctx, key, obj, opts...)
			},
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				record("create", obj, "")
				return c.Create(ctx, obj, opts...)
			},
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				record("update", obj, "")
				return c.Update(ctx, obj, opts...)
			},
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				record("patch", obj, "")
				return c.Patch(ctx, obj, patch, opts...)
			},
			SubResourceUpdate: func(ctx context.Context, c client.Client, subresource string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				record("update", obj, subresource)
				return c.SubResource(subresource).Update(ctx, obj, opts...)
			},
		}).
		Build()
	return c, calls
}
