package controller

import (
	"context"
	"errors"
	"fmt"
	"github.com/go-logr/logr/testr"
	"k8s.io/klog/v2"
	"testing"

	"gotest.tools/v3/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	"github.com/racekit/racekit/controller/registry"
)

// TestProcessNextItem checks the worker's contract with the queue: Forget on
// success, AddRateLimited on any error, Done always.
func TestProcessNextItem(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "web"}
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "deployments"}, "web", errors.New("changed"))
	tests := []struct {
		name          string
		err           error
		wantRequeued  bool
		wantRequeues  int
		previousFails int
	}{
		{"success", nil, false, 0, 0},
		{"success forgets earlier failures", nil, false, 0, 2},
		{"conflicts ran out", fmt.Errorf("reconcile: %w", conflict), true, 1, 0},
		{"generation changed", fmt.Errorf("confirm status: %w", ErrStale), true, 1, 0},
		{"blocked", fmt.Errorf("register: %w", registry.ErrTaken), true, 3, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A zero-delay limiter puts a failed key straight back, so the
			// test sees the requeue without waiting.
			q := workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](0, 0))
			defer q.ShutDown()
			for range tc.previousFails {
				q.AddRateLimited(key)
				got, _ := q.Get()
				q.Done(got)
			}
			q.Add(key)
			var reconciled []types.NamespacedName
			l := &loop{queue: q, reconcile: func(_ context.Context, k types.NamespacedName) error {
				reconciled = append(reconciled, k)
				return tc.err
			}}
			assert.Assert(t, l.processNextItem(klog.NewContext(context.Background(), testr.New(t))))
			assert.DeepEqual(t, reconciled, []types.NamespacedName{key})
			assert.Equal(t, q.Len() == 1, tc.wantRequeued, "queue length %d", q.Len())
			assert.Equal(t, q.NumRequeues(key), tc.wantRequeues)
		})
	}
}

// TestProcessNextItemShutdown checks that a worker stops once the queue is
// shut down and empty.
func TestProcessNextItemShutdown(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]())
	q.ShutDown()
	l := &loop{queue: q, reconcile: func(context.Context, types.NamespacedName) error {
		t.Error("reconcile called after shutdown")
		return nil
	}}
	assert.Assert(t, !l.processNextItem(klog.NewContext(context.Background(), testr.New(t))))
}

func TestOwnerKey(t *testing.T) {
	controlled := func(apiVersion, kind string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "dep",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "web", UID: "u", Controller: ptr.To(true)}},
		}}
	}
	notController := controlled("demo.racekit.dev/v1alpha1", "WebApp")
	notController.OwnerReferences[0].Controller = nil
	web := types.NamespacedName{Namespace: "ns", Name: "web"}
	tests := []struct {
		name   string
		obj    any
		want   types.NamespacedName
		wantOK bool
	}{
		{"webapp", controlled("demo.racekit.dev/v1alpha1", "WebApp"), web, true},
		{"webapp of another version", controlled("demo.racekit.dev/v1", "WebApp"), web, true},
		{"tombstone", cache.DeletedFinalStateUnknown{Key: "ns/dep", Obj: controlled("demo.racekit.dev/v1alpha1", "WebApp")}, web, true},
		{"other group", controlled("example.com/v1", "WebApp"), types.NamespacedName{}, false},
		{"other kind", controlled("demo.racekit.dev/v1alpha1", "Site"), types.NamespacedName{}, false},
		{"owner but not controller", notController, types.NamespacedName{}, false},
		{"no owner", &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "dep"}}, types.NamespacedName{}, false},
		{"not an object", "ns/dep", types.NamespacedName{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ownerKey(tc.obj)
			assert.Equal(t, ok, tc.wantOK)
			assert.Equal(t, got, tc.want)
		})
	}
}

func TestObjectKey(t *testing.T) {
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	web := types.NamespacedName{Namespace: "ns", Name: "web"}
	tests := []struct {
		name   string
		obj    any
		want   types.NamespacedName
		wantOK bool
	}{
		{"object", obj, web, true},
		{"tombstone", cache.DeletedFinalStateUnknown{Key: "ns/web", Obj: obj}, web, true},
		{"not an object", 42, types.NamespacedName{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := objectKey(tc.obj)
			assert.Equal(t, ok, tc.wantOK)
			assert.Equal(t, got, tc.want)
		})
	}
}

// TestRunWaitsForWorkers checks the graceful stop: run returns only after
// the reconcile in flight when ctx ended has returned. Were run to return
// early, the check would usually see finished false; finished is a plain
// bool so that the race detector may also see the read race the write.
func TestRunWaitsForWorkers(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]())
	started := make(chan struct{})
	finished := false
	l := &loop{queue: q, reconcile: func(ctx context.Context, _ types.NamespacedName) error {
		close(started)
		<-ctx.Done()
		finished = true
		return ctx.Err()
	}}
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan struct{})
	go func() {
		l.run(ctx, 2)
		close(returned)
	}()
	q.Add(types.NamespacedName{Namespace: "ns", Name: "web"})
	<-started
	cancel()
	<-returned
	assert.Assert(t, finished, "run returned while a reconcile was still running")
	assert.Assert(t, q.ShuttingDown())
}
