package controllers

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/racekit/racekit/harness/language"
	"gotest.tools/v3/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestCacheCatchesUpAndHolds starts a controller's cache over ConfigMaps
// and checks the three things the harness promises of it: its informer's
// calls are in the trace; once caught up it holds every write the trace
// shows; and a held resource's events wait, in order, until release, while
// the cache keeps serving what it had. A cache that can no longer catch up
// fails with the resourceVersion it misses.
func TestCacheCatchesUpAndHolds(t *testing.T) {
	ctx := context.Background()
	sc, err := language.NewScenario(ctx, controlPlane(t), "cache", t.TempDir())
	assert.NilError(t, err)
	defer sc.Close()
	stateOf(sc).cacheTimeout = 500 * time.Millisecond
	ctl, err := sc.Actor("controller")
	assert.NilError(t, err)
	cc, err := startCache(sc, "controller", ctl.Config, kscheme.Scheme, []client.Object{&corev1.ConfigMap{}})
	assert.NilError(t, err)
	defer cc.close()

	var informer []string
	for _, r := range sc.Trace().Rows() {
		if r.Actor == "controller" {
			informer = append(informer, r.Verb+" "+r.Object)
		}
	}
	assert.DeepEqual(t, informer, []string{"watch configmaps"})

	bob, err := sc.Actor("bob")
	assert.NilError(t, err)
	cms := bob.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(sc.Namespace)
	write := func(value string) string {
		t.Helper()
		obj, err := cms.Get(ctx, "cm", metav1.GetOptions{})
		if err != nil {
			obj = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm"}}}
		}
		assert.NilError(t, unstructured.SetNestedField(obj.Object, value, "data", "v"))
		if obj.GetResourceVersion() == "" {
			obj, err = cms.Create(ctx, obj, metav1.CreateOptions{})
		} else {
			obj, err = cms.Update(ctx, obj, metav1.UpdateOptions{})
		}
		assert.NilError(t, err)
		return obj.GetResourceVersion()
	}
	cached := func() string {
		t.Helper()
		var cm corev1.ConfigMap
		assert.NilError(t, cc.cache.Get(ctx, client.ObjectKey{Namespace: sc.Namespace, Name: "cm"}, &cm))
		return cm.ResourceVersion + " " + cm.Data["v"]
	}

	rv1 := write("one")
	assert.NilError(t, catchUp(sc, cc))
	assert.Equal(t, cached(), rv1+" one")

	assert.NilError(t, cc.feed.hold("configmaps"))
	rv2 := write("two")
	// The event reaches the feed and waits there.
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	assert.NilError(t, cc.feed.wait(wait, func() bool { return cc.feed.queued["configmaps"] == 1 }))
	assert.NilError(t, catchUp(sc, cc), "a held resource is not waited for")
	assert.Equal(t, cached(), rv1+" one", "the cache served a write whose event is held")

	assert.NilError(t, cc.feed.release("configmaps"))
	assert.NilError(t, catchUp(sc, cc))
	assert.Equal(t, cached(), rv2+" two")
	assert.ErrorIs(t, cc.feed.release("configmaps"), errNotHeld)

	// Stopped, the cache never sees the next write.
	cc.close()
	rv3 := write("three")
	err = catchUp(sc, cc)
	assert.ErrorIs(t, err, errCacheLag)
	for _, want := range []string{"configmaps/cm: the trace shows resourceVersion " + rv3, "the cache holds resourceVersion " + rv2} {
		assert.Assert(t, strings.Contains(err.Error(), want), "want %q in: %v", want, err)
	}
}
