package controller_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/yaml"

	"github.com/racekit/racekit/controller/api/v1alpha1"
)

// waiter waits for objects to reach a state, through watches on the API
// server, each bounded by convergeTimeout.
type waiter struct {
	t   *testing.T
	ctx context.Context
	dyn dynamic.Interface
	ns  string
}

func (w *waiter) app(name string, ok func(*v1alpha1.WebApp) bool) *v1alpha1.WebApp {
	w.t.Helper()
	app := &v1alpha1.WebApp{}
	w.until(webappsGVR, name, func(u *unstructured.Unstructured) bool {
		*app = v1alpha1.WebApp{}
		return u != nil && fromUnstructured(w.t, u, app) && ok(app)
	})
	return app
}

func (w *waiter) deployment(name string, ok func(*appsv1.Deployment) bool) *appsv1.Deployment {
	w.t.Helper()
	dep := &appsv1.Deployment{}
	w.until(deploymentsGVR, name, func(u *unstructured.Unstructured) bool {
		*dep = appsv1.Deployment{}
		return u != nil && fromUnstructured(w.t, u, dep) && ok(dep)
	})
	return dep
}

func (w *waiter) gone(gvr schema.GroupVersionResource, name string) {
	w.t.Helper()
	w.until(gvr, name, func(u *unstructured.Unstructured) bool { return u == nil })
}

// until returns once ok holds for the object of gvr called name, which
// ok sees as nil while the object does not exist. It lists the object, then
// watches it; it never polls.
func (w *waiter) until(gvr schema.GroupVersionResource, name string, ok func(*unstructured.Unstructured) bool) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(w.ctx, convergeTimeout)
	defer cancel()
	rc := w.dyn.Resource(gvr).Namespace(w.ns)
	byName := func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + name }
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			byName(&o)
			return rc.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			byName(&o)
			return rc.Watch(ctx, o)
		},
	}
	var last *unstructured.Unstructured
	check := func(u *unstructured.Unstructured) bool {
		last = u
		return ok(u)
	}
	_, err := watchtools.UntilWithSync(ctx, lw, &unstructured.Unstructured{},
		func(store cache.Store) (bool, error) {
			item, exists, err := store.GetByKey(w.ns + "/" + name)
			if err != nil || !exists {
				return check(nil), err
			}
			return check(item.(*unstructured.Unstructured)), nil
		},
		func(ev watch.Event) (bool, error) {
			if ev.Type == watch.Deleted {
				return check(nil), nil
			}
			u, isObj := ev.Object.(*unstructured.Unstructured)
			return isObj && check(u), nil
		})
	if err != nil {
		seen := "nothing: the object does not exist"
		if last != nil {
			last = last.DeepCopy()
			last.SetManagedFields(nil)
			data, _ := yaml.Marshal(last.Object)
			seen = string(data)
		}
		w.t.Fatalf("%s/%s did not reach the state the test waits for within %v: %v\nlast seen:\n%s", gvr.Resource, name, convergeTimeout, err, seen)
	}
}

func fromUnstructured(t *testing.T, u *unstructured.Unstructured, into any) bool {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Errorf("convert %s: %v", u.GetName(), err)
		return false
	}
	return true
}
