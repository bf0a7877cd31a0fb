package floor

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gotest.tools/v3/assert"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
)

var alwaysReady = func() bool { return true }

// newDeployment returns a Deployment in the "ns" namespace, as the
// informer would have cached it at resourceVersion 7.
func newDeployment(replicas *int32, annotations map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:            "web",
			Namespace:       "ns",
			ResourceVersion: "7",
			Annotations:     annotations,
		},
		Spec: appsv1.DeploymentSpec{Replicas: replicas},
	}
}

// raised returns d as the controller should send it: raised to floor, with
// the replicas it had before.
func raised(d *appsv1.Deployment, floor int32, from string) *appsv1.Deployment {
	d = d.DeepCopy()
	d.Spec.Replicas = &floor
	d.Annotations[RaisedFromAnnotation] = from
	return d
}

func int32Ptr(n int32) *int32 { return &n }

func TestSync(t *testing.T) {
	deploymentsResource := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	update := func(d *appsv1.Deployment) core.Action {
		return core.UpdateActionImpl{
			ActionImpl:    core.ActionImpl{Namespace: d.Namespace, Verb: "update", Resource: deploymentsResource},
			Object:        d,
			UpdateOptions: metav1.UpdateOptions{FieldManager: FieldManager},
		}
	}
	conflict := func(core.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(deploymentsResource.GroupResource(), "web",
			errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}

	below := newDeployment(int32Ptr(1), map[string]string{MinReplicasAnnotation: "3"})
	nilReplicas := newDeployment(nil, map[string]string{MinReplicasAnnotation: "2"})

	tests := []struct {
		name       string
		deployment *appsv1.Deployment
		// reactor, when set, answers the clientset's updates.
		reactor core.ReactionFunc
		// wantActions are the calls the sync makes to the API server.
		wantActions []core.Action
		// wantConflict says the sync returns a 409 Conflict as it is.
		wantConflict bool
		// wantRequeues is how often the worker put the key back.
		wantRequeues int
	}{
		{
			name:        "below the floor is raised to it",
			deployment:  below,
			wantActions: []core.Action{update(raised(below, 3, "1"))},
		},
		{
			name:        "nil replicas counts as 1",
			deployment:  nilReplicas,
			wantActions: []core.Action{update(raised(nilReplicas, 2, "1"))},
		},
		{
			name:       "at the floor needs nothing",
			deployment: newDeployment(int32Ptr(3), map[string]string{MinReplicasAnnotation: "3"}),
		},
		{
			name:       "above the floor needs nothing",
			deployment: newDeployment(int32Ptr(5), map[string]string{MinReplicasAnnotation: "3"}),
		},
		{
			name:       "nil replicas at a floor of 1 needs nothing",
			deployment: newDeployment(nil, map[string]string{MinReplicasAnnotation: "1"}),
		},
		{
			name:       "no annotation needs nothing",
			deployment: newDeployment(int32Ptr(0), nil),
		},
		{
			name:       "a value that is not an integer is dropped, not requeued",
			deployment: newDeployment(int32Ptr(1), map[string]string{MinReplicasAnnotation: "three"}),
		},
		{
			name:       "a negative value is dropped, not requeued",
			deployment: newDeployment(int32Ptr(1), map[string]string{MinReplicasAnnotation: "-2"}),
		},
		{
			name:         "a conflict is returned and requeued",
			deployment:   below,
			reactor:      conflict,
			wantActions:  []core.Action{update(raised(below, 3, "1"))},
			wantConflict: true,
			wantRequeues: 1,
		},
	}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)

			kube := fake.NewClientset(tc.deployment)
			if tc.reactor != nil {
				kube.PrependReactor("update", "deployments", tc.reactor)
			}
			factory := informers.NewSharedInformerFactory(kube, 0)
			c := NewController(ctx, kube, factory.Apps().V1().Deployments())
			c.deploymentsSynced = alwaysReady
			// Seed the lister directly: the informers are not started, so
			// the only actions recorded are the controller's.
			cached := tc.deployment.DeepCopy()
			assert.NilError(t, factory.Apps().V1().Deployments().Informer().GetIndexer().Add(cached))
			key := cache.MetaObjectToName(cached)

			err := c.syncHandler(ctx, key)
			if tc.wantConflict {
				assert.Assert(t, apierrors.IsConflict(err), "want a 409 Conflict as it is, got %v", err)
			} else {
				assert.NilError(t, err)
			}
			assert.DeepEqual(t, kube.Actions(), tc.wantActions, cmpActions, cmpopts.EquateEmpty())
			assert.DeepEqual(t, cached, tc.deployment) // the lister's object was not changed

			// The worker loop: Forget on success or a dropped value,
			// AddRateLimited on an error.
			kube.ClearActions()
			c.workqueue.Add(key)
			assert.Assert(t, c.processNextWorkItem(ctx))
			assert.Equal(t, c.workqueue.NumRequeues(key), tc.wantRequeues)
			c.workqueue.ShutDown()
		})
	}
}

// cmpActions compares actions by what the API server would receive: verb,
// resource, namespace, the object sent and the options.
var cmpActions = cmp.Transformer("action", func(a core.Action) any {
	type sent struct {
		Verb, Resource, Namespace string
		Object                    runtime.Object
		Options                   metav1.UpdateOptions
	}
	s := sent{Verb: a.GetVerb(), Resource: a.GetResource().String(), Namespace: a.GetNamespace()}
	if u, ok := a.(core.UpdateActionImpl); ok {
		s.Object, s.Options = u.Object, u.UpdateOptions
	}
	return s
})

func TestParseFloor(t *testing.T) {
	for value, want := range map[string]int32{"0": 0, "1": 1, "10": 10} {
		got, err := parseFloor(value)
		assert.NilError(t, err)
		assert.Equal(t, got, want)
	}
	for _, value := range []string{"", "three", "-1", "1.5", " 2", "99999999999"} {
		_, err := parseFloor(value)
		assert.Assert(t, err != nil, "parseFloor(%q) accepted it", value)
	}
}
