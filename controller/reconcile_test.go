package controller_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/racekit/racekit/controller"
	"github.com/racekit/racekit/controller/api/v1alpha1"
	"github.com/racekit/racekit/controller/registry"
	"github.com/racekit/racekit/hooks"
)

// These tests run the Reconciler against the real API server, one reconcile
// at a time, and check the calls it made in order. Hooks, not time, order
// the races.

// assertCalls compares the calls the controller made since the last check
// with want.
func assertCalls(t *testing.T, rg *rig, want ...string) {
	t.Helper()
	got := rg.calls.take()
	assert.Assert(t, cmp.Equal(got, want), "controller calls (-got +want):\n%s", cmp.Diff(got, want))
}

func ready(gen int64, reason, message string) metav1.Condition {
	status := metav1.ConditionFalse
	if reason == v1alpha1.ReasonReconciled {
		status = metav1.ConditionTrue
	}
	return metav1.Condition{
		Type: v1alpha1.ConditionReady, Status: status, Reason: reason, Message: message,
		ObservedGeneration: gen, LastTransitionTime: metav1.NewTime(now),
	}
}

func TestReconcileCreates(t *testing.T) {
	tests := []struct {
		name      string
		opts      rigOptions
		wantFirst []string
		wantAgain []string
		wantReg   string
	}{
		{
			name: "registration on",
			wantFirst: []string{
				"get webapps/web 200",
				"update webapps/web 200", // the finalizer
				"create registrations/web 201",
				"get deployments/web 404",
				"create deployments/web 201",
				"get webapps/web 200",
				"update webapps/web/status 200",
			},
			wantAgain: []string{
				"get webapps/web 200",
				"create registrations/web 200", // the same record: no new create
				"get deployments/web 200",
				"get webapps/web 200",
			},
			wantReg: "reg-1",
		},
		{
			name: "registration off",
			opts: rigOptions{noRegistry: true},
			wantFirst: []string{
				"get webapps/web 200",
				"update webapps/web 200",
				"get deployments/web 404",
				"create deployments/web 201",
				"get webapps/web 200",
				"update webapps/web/status 200",
			},
			wantAgain: []string{
				"get webapps/web 200",
				"get deployments/web 200",
				"get webapps/web 200",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rg := newRig(t, tc.opts)
			rg.createApp("web", 2)

			assert.NilError(t, rg.reconcile("web"))
			assertCalls(t, rg, tc.wantFirst...)
			// A second reconcile with nothing to do writes nothing.
			assert.NilError(t, rg.reconcile("web"))
			assertCalls(t, rg, tc.wantAgain...)

			app := rg.getApp("web")
			assert.DeepEqual(t, app.Finalizers, []string{v1alpha1.Finalizer})
			assert.DeepEqual(t, app.Status, v1alpha1.WebAppStatus{
				ObservedGeneration: 1, Replicas: 2, Registration: tc.wantReg,
				Conditions: []metav1.Condition{ready(1, v1alpha1.ReasonReconciled, "deployment web runs 2 replicas of nginx:1.27")},
			})
			var dep appsv1.Deployment
			assert.NilError(t, rg.admin.Get(rg.ctx, rg.key("web"), &dep))
			assert.Equal(t, *dep.Spec.Replicas, int32(2))
			assert.Equal(t, metav1.GetControllerOf(&dep).UID, app.UID)
			assert.Equal(t, dep.Labels[controller.LabelManagedBy], controller.ManagedBy)
			if rg.registry != nil {
				assert.Equal(t, rg.registry.Creates(), 1)
			}
		})
	}
}

func TestReconcileGone(t *testing.T) {
	rg := newRig(t, rigOptions{})
	assert.NilError(t, rg.reconcile("web"))
	assertCalls(t, rg, "get webapps/web 404")
}

// TestReconcileConflictAtEachWrite makes each write of a reconcile meet a
// conflict once: right after the controller's read, the admin changes the
// object. The controller must read again, write again, succeed, and count
// the conflict under the write's resource and operation.
func TestReconcileConflictAtEachWrite(t *testing.T) {
	tests := []struct {
		name string
		// setup runs before the hook is armed; the rig has created
		// WebApp web with 2 replicas.
		setup func(rg *rig)
		// match and occurrence select the read after which the admin
		// labels the object.
		match      hooks.Matcher
		occurrence int
		bump       func(rg *rig) error
		want       []string
		resource   string
		operation  string
	}{
		{
			name:  "add finalizer",
			setup: func(*rig) {},
			match: hooks.Matcher{Verb: "get", Resource: "webapps", Name: "web"}, occurrence: 1,
			bump: labelApp,
			want: []string{
				"get webapps/web 200",
				"update webapps/web 409",
				"get webapps/web 200",
				"update webapps/web 200",
				"create registrations/web 201",
				"get deployments/web 404",
				"create deployments/web 201",
				"get webapps/web 200",
				"update webapps/web/status 200",
			},
			resource: controller.ResourceWebApps, operation: controller.OpAddFinalizer,
		},
		{
			name:  "update deployment",
			setup: scaleTo3,
			match: hooks.Matcher{Verb: "get", Resource: "deployments", Name: "web"}, occurrence: 1,
			bump: labelDeployment,
			want: []string{
				"get webapps/web 200",
				"create registrations/web 200",
				"get deployments/web 200",
				"update deployments/web 409",
				"get deployments/web 200",
				"update deployments/web 200",
				"get webapps/web 200",
				"update webapps/web/status 200",
			},
			resource: controller.ResourceDeployments, operation: controller.OpUpdate,
		},
		{
			name:  "update status",
			setup: scaleTo3,
			match: hooks.Matcher{Verb: "get", Resource: "webapps", Name: "web"}, occurrence: 2,
			bump: labelApp,
			want: []string{
				"get webapps/web 200",
				"create registrations/web 200",
				"get deployments/web 200",
				"update deployments/web 200",
				"get webapps/web 200",
				"update webapps/web/status 409",
				"get webapps/web 200",
				"update webapps/web/status 200",
			},
			resource: controller.ResourceWebApps, operation: controller.OpUpdateStatus,
		},
		{
			name: "remove finalizer",
			setup: func(rg *rig) {
				assert.NilError(rg.t, rg.reconcile("web"))
				assert.NilError(rg.t, rg.admin.Delete(rg.ctx, rg.getApp("web")))
				rg.calls.take()
			},
			match: hooks.Matcher{Verb: "get", Resource: "webapps", Name: "web"}, occurrence: 1,
			bump: labelApp,
			want: []string{
				"get webapps/web 200",
				"delete registrations/web 204",
				"update webapps/web 409",
				"get webapps/web 200",
				"update webapps/web 200",
			},
			resource: controller.ResourceWebApps, operation: controller.OpRemoveFinalizer,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rg := newRig(t, rigOptions{})
			rg.createApp("web", 2)
			tc.setup(rg)
			rg.arm(tc.match, tc.occurrence, func() error { return tc.bump(rg) })

			assert.NilError(t, rg.reconcile("web"))
			assertCalls(t, rg, tc.want...)
			assert.Equal(t, rg.metrics.Conflicts(tc.resource, tc.operation), 1)
			assert.Equal(t, rg.registry.Creates(), 1, "registration must happen once")
		})
	}
}

func scaleTo3(rg *rig) {
	rg.t.Helper()
	assert.NilError(rg.t, rg.reconcile("web"))
	assert.NilError(rg.t, rg.patch(rg.getApp("web"), `{"spec":{"replicas":3}}`))
	rg.calls.take()
}

// labelApp and labelDeployment change the object as another writer would,
// with a new label value each time, so that each moves the resourceVersion.
func labelApp(rg *rig) error {
	return rg.patch(&v1alpha1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: rg.ns}}, rg.nextLabel())
}

func labelDeployment(rg *rig) error {
	return rg.patch(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: rg.ns}}, rg.nextLabel())
}

// TestReconcileConflictsRunOut makes every update of the Deployment
// conflict. The retries are bounded: the last Conflict comes back to the
// caller, where apierrors.IsConflict sees it, status confirms nothing, and
// the registration still happened exactly once.
func TestReconcileConflictsRunOut(t *testing.T) {
	rg := newRig(t, rigOptions{})
	rg.createApp("web", 2)
	scaleTo3(rg)
	rg.arm(hooks.Matcher{Verb: "get", Resource: "deployments", Name: "web"}, hooks.Every, func() error { return labelDeployment(rg) })

	err := rg.reconcile("web")
	assert.Assert(t, apierrors.IsConflict(err), "got %v", err)
	want := []string{"get webapps/web 200", "create registrations/web 200"}
	for range 5 {
		want = append(want, "get deployments/web 200", "update deployments/web 409")
	}
	assertCalls(t, rg, want...)
	assert.Equal(t, rg.metrics.Conflicts(controller.ResourceDeployments, controller.OpUpdate), 5)
	assert.Equal(t, rg.registry.Creates(), 1)
	assert.Equal(t, rg.getApp("web").Status.ObservedGeneration, int64(1))
}

// TestReconcileStaleGeneration changes the spec while the controller works
// on the Deployment. The controller finishes with the replicas it read at
// the start, but status must not confirm them for the new generation:
// Reconcile returns ErrStale, and the next reconcile catches up.
func TestReconcileStaleGeneration(t *testing.T) {
	rg := newRig(t, rigOptions{})
	rg.createApp("web", 2)
	scaleTo3(rg)
	rg.arm(hooks.Matcher{Verb: "get", Resource: "deployments", Name: "web"}, 1, func() error {
		return rg.patch(rg.getApp("web"), `{"spec":{"replicas":4}}`)
	})

	err := rg.reconcile("web")
	assert.Assert(t, errors.Is(err, controller.ErrStale), "got %v", err)
	assert.ErrorContains(t, err, "generation is 3, was 2")
	assertCalls(t, rg,
		"get webapps/web 200",
		"create registrations/web 200",
		"get deployments/web 200",
		"update deployments/web 200",
		"get webapps/web 200", // generation 3: nothing confirmed
	)
	var dep appsv1.Deployment
	assert.NilError(t, rg.admin.Get(rg.ctx, rg.key("web"), &dep))
	assert.Equal(t, *dep.Spec.Replicas, int32(3), "the replicas captured when the reconcile began")
	st := rg.getApp("web").Status
	assert.Equal(t, st.ObservedGeneration, int64(1))
	assert.Equal(t, st.Replicas, int32(2))

	assert.NilError(t, rg.reconcile("web"))
	st = rg.getApp("web").Status
	assert.Equal(t, st.ObservedGeneration, int64(3))
	assert.Equal(t, st.Replicas, int32(4))
}

// TestReconcileOwnedByOther checks that the controller refuses a Deployment
// it does not control, leaves it as it is, and says why in status.
func TestReconcileOwnedByOther(t *testing.T) {
	foreign := func(rg *rig, labels map[string]string, owners []metav1.OwnerReference) {
		dep := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: rg.ns, Labels: labels, OwnerReferences: owners},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](7),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: podTemplate(map[string]string{"app": "web"}),
			},
		}
		assert.NilError(rg.t, rg.admin.Create(rg.ctx, dep))
	}
	managed := map[string]string{controller.LabelManagedBy: controller.ManagedBy}
	tests := []struct {
		name        string
		setup       func(rg *rig)
		wantMessage string
	}{
		{"no owner", func(rg *rig) { foreign(rg, managed, nil) }, "web has no controller owner"},
		{"another owner", func(rg *rig) {
			foreign(rg, managed, []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "uid-cm", Controller: ptr.To(true)}})
		}, "web is controlled by ConfigMap cm (uid uid-cm)"},
		{"no managed-by label", func(rg *rig) {
			uid := rg.getApp("web").UID
			foreign(rg, nil, []metav1.OwnerReference{{APIVersion: "demo.racekit.dev/v1alpha1", Kind: "WebApp", Name: "web", UID: uid, Controller: ptr.To(true)}})
		}, "web lacks the label app.kubernetes.io/managed-by=racekit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rg := newRig(t, rigOptions{})
			rg.createApp("web", 2)
			tc.setup(rg)

			err := rg.reconcile("web")
			assert.Assert(t, errors.Is(err, controller.ErrNotOwned), "got %v", err)
			assert.ErrorContains(t, err, tc.wantMessage)
			assertCalls(t, rg,
				"get webapps/web 200",
				"update webapps/web 200",
				"create registrations/web 201",
				"get deployments/web 200",
				"get webapps/web 200",
				"update webapps/web/status 200",
			)
			var dep appsv1.Deployment
			assert.NilError(t, rg.admin.Get(rg.ctx, rg.key("web"), &dep))
			assert.Equal(t, *dep.Spec.Replicas, int32(7), "the controller must not touch it")
			assert.DeepEqual(t, rg.getApp("web").Status, v1alpha1.WebAppStatus{
				ObservedGeneration: 1,
				Conditions:         []metav1.Condition{ready(1, v1alpha1.ReasonOwnedByOther, err.Error())},
			})
		})
	}
}

// TestReconcileRecreatedDoesNotInherit deletes a WebApp behind the
// controller's back, so that its record stays, and creates it again under
// the same name. The new WebApp has a new uid and must not inherit the old
// record: it gets RegistrationTaken, and no Deployment.
func TestReconcileRecreatedDoesNotInherit(t *testing.T) {
	rg := newRig(t, rigOptions{})
	old := rg.createApp("web", 2)
	rg.mustReconcile("web")
	assert.NilError(t, rg.admin.Delete(rg.ctx, old))
	assert.NilError(t, rg.patch(rg.getApp("web"), `{"metadata":{"finalizers":null}}`))
	assert.NilError(t, rg.admin.Delete(rg.ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: rg.ns}}))
	rg.createApp("web", 2)

	err := rg.reconcile("web")
	assert.Assert(t, errors.Is(err, registry.ErrTaken), "got %v", err)
	assertCalls(t, rg,
		"get webapps/web 200",
		"update webapps/web 200",
		"create registrations/web 409",
		"get webapps/web 200",
		"update webapps/web/status 200",
	)
	app := rg.getApp("web")
	assert.DeepEqual(t, app.Status, v1alpha1.WebAppStatus{
		ObservedGeneration: 1,
		Conditions:         []metav1.Condition{ready(1, v1alpha1.ReasonRegistrationTaken, err.Error())},
	})
	assert.Equal(t, rg.registry.Creates(), 1)

	// Deleting the new WebApp must not remove the old WebApp's record, and
	// must not be held up by it either.
	assert.NilError(t, rg.admin.Delete(rg.ctx, app))
	assert.NilError(t, rg.reconcile("web"))
	assertCalls(t, rg,
		"get webapps/web 200",
		"delete registrations/web 409",
		"update webapps/web 200",
	)
	assert.Assert(t, apierrors.IsNotFound(rg.admin.Get(rg.ctx, rg.key("web"), &v1alpha1.WebApp{})))
	rec, err := registry.NewClient(rg.registryURL, nil).Lookup(rg.ctx, rg.ns, "web")
	assert.NilError(t, err)
	assert.Equal(t, rec.UID, string(old.UID))
}

// TestReconcileDelete checks the order on deletion: the record goes first,
// then the finalizer, and a failed deregistration keeps the finalizer.
func TestReconcileDelete(t *testing.T) {
	failDeletes := true
	rg := newRig(t, rigOptions{registryHandler: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodDelete && failDeletes {
				http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
				return
			}
			next.ServeHTTP(w, r)
		})
	}})
	rg.createApp("web", 2)
	rg.mustReconcile("web")
	assert.NilError(t, rg.admin.Delete(rg.ctx, rg.getApp("web")))

	err := rg.reconcile("web")
	var se *registry.StatusError
	assert.Assert(t, errors.As(err, &se), "got %v", err)
	assertCalls(t, rg, "get webapps/web 200", "delete registrations/web 503")
	assert.Assert(t, controllerutil.ContainsFinalizer(rg.getApp("web"), v1alpha1.Finalizer), "the finalizer must stay while the record does")

	failDeletes = false
	assert.NilError(t, rg.reconcile("web"))
	assertCalls(t, rg, "get webapps/web 200", "delete registrations/web 204", "update webapps/web 200")
	assert.Assert(t, apierrors.IsNotFound(rg.admin.Get(rg.ctx, rg.key("web"), &v1alpha1.WebApp{})))
	_, err = registry.NewClient(rg.registryURL, nil).Lookup(rg.ctx, rg.ns, "web")
	assert.Assert(t, errors.Is(err, registry.ErrNotFound), "got %v", err)
}

// TestReconcileDeploymentDeleting checks that the controller leaves a
// Deployment that is being deleted alone.
func TestReconcileDeploymentDeleting(t *testing.T) {
	rg := newRig(t, rigOptions{})
	rg.createApp("web", 2)
	scaleTo3(rg)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: rg.ns}}
	assert.NilError(t, rg.patch(dep, `{"metadata":{"finalizers":["racekit.dev/hold"]}}`))
	assert.NilError(t, rg.admin.Delete(rg.ctx, dep))
	t.Cleanup(func() { _ = rg.patch(dep, `{"metadata":{"finalizers":null}}`) })

	assert.NilError(t, rg.reconcile("web"))
	assertCalls(t, rg, "get webapps/web 200", "create registrations/web 200", "get deployments/web 200")
	assert.NilError(t, rg.admin.Get(rg.ctx, rg.key("web"), dep))
	assert.Equal(t, *dep.Spec.Replicas, int32(2))
}
