package controller_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gotest.tools/v3/assert"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/racekit/racekit/controller"
	"github.com/racekit/racekit/controller/api/v1alpha1"
	"github.com/racekit/racekit/controller/registry"
)

// serviceAccount is the user the deployed controller runs as, bound to the
// ClusterRole of docs/deploy/rbac.yaml.
const serviceAccount = "system:serviceaccount:racekit-system:racekit-controller"

// convergeTimeout bounds each wait for convergence.
const convergeTimeout = 30 * time.Second

var (
	webappsGVR     = v1alpha1.GroupVersion.WithResource(v1alpha1.Resource)
	deploymentsGVR = appsv1.SchemeGroupVersion.WithResource("deployments")
)

// TestRunEndToEnd runs the production controller, Run with its informers
// and work queue, as the ServiceAccount of the deploy manifests, with a
// registry on loopback. It creates, scales, blocks and deletes WebApps, and
// waits through watches for the controller to converge.
func TestRunEndToEnd(t *testing.T) {
	ctx := klog.NewContext(context.Background(), testr.New(t))
	adminCfg, err := cp.User("e2e-admin", "system:masters")
	assert.NilError(t, err)
	admin, err := client.New(adminCfg, client.Options{Scheme: controller.NewScheme()})
	assert.NilError(t, err)
	dyn, err := dynamic.NewForConfig(adminCfg)
	assert.NilError(t, err)
	applyDeployManifests(ctx, t, admin)

	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rk-e2e-"}}
	assert.NilError(t, admin.Create(ctx, nsObj))
	ns := nsObj.Name

	saCfg := rest.CopyConfig(adminCfg)
	saCfg.Impersonate = rest.ImpersonationConfig{UserName: serviceAccount}
	checkImpersonation(ctx, t, saCfg, ns)
	checkRBAC(ctx, t, admin, ns)

	reg := registry.NewServer()
	hs := httptest.NewServer(reg)
	defer hs.Close()
	regc := registry.NewClient(hs.URL, hs.Client())

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- controller.Run(runCtx, saCfg, controller.RunOptions{
			Options:   controller.Options{Registry: regc},
			Namespace: ns,
			Workers:   2,
		})
	}()
	stopped := false
	stopRun := func() {
		if stopped {
			return
		}
		stopped = true
		stop()
		select {
		case err := <-done:
			assert.NilError(t, err, "Run must return nil on a graceful stop")
		case <-time.After(convergeTimeout):
			t.Fatalf("Run did not return within %v of its context ending", convergeTimeout)
		}
	}
	defer stopRun()

	w := &waiter{t: t, ctx: ctx, dyn: dyn, ns: ns}
	create := func(name string, replicas int32) {
		t.Helper()
		app := &v1alpha1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.WebAppSpec{Replicas: replicas, Image: "nginx:1.27"}}
		assert.NilError(t, admin.Create(ctx, app))
	}
	ignoreTime := cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")
	readyStatus := func(gen int64, replicas int32, reg string) v1alpha1.WebAppStatus {
		return v1alpha1.WebAppStatus{ObservedGeneration: gen, Replicas: replicas, Registration: reg, Conditions: []metav1.Condition{{
			Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonReconciled, ObservedGeneration: gen,
			Message: fmt.Sprintf("deployment web runs %d replicas of nginx:1.27", replicas),
		}}}
	}

	// phase 1: a new WebApp gets its finalizer, a record, a Deployment and
	// a Ready status.
	create("web", 1)
	app := w.app("web", converged)
	assert.DeepEqual(t, app.Status, readyStatus(1, 1, "reg-1"), ignoreTime)
	assert.DeepEqual(t, app.Finalizers, []string{v1alpha1.Finalizer})
	dep := w.deployment("web", replicas(1))
	assert.Equal(t, metav1.GetControllerOf(dep).UID, app.UID)
	assert.Equal(t, dep.Labels[controller.LabelManagedBy], controller.ManagedBy)

	// phase 2: scaling moves the Deployment and the status, not the record.
	assert.NilError(t, admin.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":3}}`))))
	app = w.app("web", converged)
	assert.DeepEqual(t, app.Status, readyStatus(2, 3, "reg-1"), ignoreTime)
	w.deployment("web", replicas(3))
	assert.Equal(t, reg.Creates(), 1)

	// phase 2b: a change to the Deployment wakes the controller through the
	// Deployment informer, and the controller puts the replicas back.
	dep = &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}}
	assert.NilError(t, admin.Patch(ctx, dep, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":9}}`))))
	w.deployment("web", replicas(3))

	// phase 3: a name registered to another uid blocks its WebApp.
	_, err = regc.Register(ctx, ns, "taken", "uid-of-someone-else")
	assert.NilError(t, err)
	create("taken", 1)
	app = w.app("taken", readyReason(v1alpha1.ReasonRegistrationTaken))
	assert.Equal(t, app.Status.Registration, "")
	assert.Assert(t, apierrors.IsNotFound(admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "taken"}, &appsv1.Deployment{})),
		"a blocked WebApp must get no Deployment")

	// phase 4: a Deployment the controller does not control blocks its
	// WebApp, and stays as it was.
	assert.NilError(t, admin.Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "foreign", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](7),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "foreign"}},
			Template: podTemplate(map[string]string{"app": "foreign"}),
		},
	}))
	create("foreign", 1)
	w.app("foreign", readyReason(v1alpha1.ReasonOwnedByOther))
	w.deployment("foreign", replicas(7))

	// phase 5: deleted WebApps lose their records, then their finalizers;
	// a record of another uid stays.
	for _, name := range []string{"web", "taken", "foreign"} {
		assert.NilError(t, admin.Delete(ctx, &v1alpha1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}))
		w.gone(webappsGVR, name)
	}
	_, err = regc.Lookup(ctx, ns, "web")
	assert.Assert(t, errors.Is(err, registry.ErrNotFound), "record of web after delete: %v", err)
	rec, err := regc.Lookup(ctx, ns, "taken")
	assert.NilError(t, err)
	assert.Equal(t, rec.UID, "uid-of-someone-else")

	// phase 6: a WebApp created again under an old name gets a new record.
	// (envtest runs no garbage collector, so the test removes the old
	// Deployment itself.)
	assert.NilError(t, admin.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}}))
	w.gone(deploymentsGVR, "web")
	create("web", 2)
	app = w.app("web", converged)
	assert.DeepEqual(t, app.Status, readyStatus(1, 2, "reg-4"), ignoreTime)
	w.deployment("web", replicas(2))
	assert.Equal(t, reg.Creates(), 4, "web, the other uid's taken, foreign, web again")

	// phase 7: the controller stops on request.
	stopRun()
}

// converged says that the controller confirmed the WebApp's current spec.
func converged(app *v1alpha1.WebApp) bool {
	c := readyCondition(app)
	return c != nil && c.Status == metav1.ConditionTrue &&
		app.Status.ObservedGeneration == app.Generation && app.Status.Replicas == app.Spec.Replicas
}

// readyReason says that the Ready condition has reason for the current
// generation.
func readyReason(reason string) func(*v1alpha1.WebApp) bool {
	return func(app *v1alpha1.WebApp) bool {
		c := readyCondition(app)
		return c != nil && c.Reason == reason && c.ObservedGeneration == app.Generation
	}
}

func readyCondition(app *v1alpha1.WebApp) *metav1.Condition {
	for i, c := range app.Status.Conditions {
		if c.Type == v1alpha1.ConditionReady {
			return &app.Status.Conditions[i]
		}
	}
	return nil
}

func replicas(n int32) func(*appsv1.Deployment) bool {
	return func(d *appsv1.Deployment) bool { return d.Spec.Replicas != nil && *d.Spec.Replicas == n }
}

// applyDeployManifests creates what docs/deploy declares, as an
// administrator would: all of rbac.yaml, and the Namespace and
// ServiceAccount of controller.yaml. The controller's own Deployment cannot
// run in envtest, so it is only checked with a server-side dry run.
func applyDeployManifests(ctx context.Context, t *testing.T, admin client.Client) {
	t.Helper()
	for _, file := range []string{"../docs/deploy/controller.yaml", "../docs/deploy/rbac.yaml"} {
		for _, obj := range readManifests(t, file) {
			var opts []client.CreateOption
			if obj.GetKind() == "Deployment" {
				opts = append(opts, client.DryRunAll)
			}
			err := admin.Create(ctx, obj, opts...)
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			assert.NilError(t, err, "%s: create %s %s", file, obj.GetKind(), obj.GetName())
		}
	}
}

func readManifests(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(file)
	assert.NilError(t, err)
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var out []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return out
		}
		assert.NilError(t, err, file)
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}

// checkImpersonation makes sure that cfg really acts as the ServiceAccount
// and not as the administrator it is built on: otherwise the end-to-end
// test would prove nothing about rbac.yaml.
func checkImpersonation(ctx context.Context, t *testing.T, cfg *rest.Config, ns string) {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: controller.NewScheme()})
	assert.NilError(t, err)
	err = c.List(ctx, &corev1.SecretList{}, client.InNamespace(ns))
	assert.Assert(t, apierrors.IsForbidden(err), "list secrets as %s: want Forbidden, got %v", serviceAccount, err)
}

// checkRBAC asks the API server what the ServiceAccount may do, and
// compares that with the calls the controller makes: no fewer, since the
// controller would fail, and no more, since the role is least privilege.
func checkRBAC(ctx context.Context, t *testing.T, admin client.Client, ns string) {
	t.Helper()
	need := map[string][]string{
		"demo.racekit.dev/webapps":            {"get", "list", "watch", "update"},
		"demo.racekit.dev/webapps/status":     {"update"},
		"demo.racekit.dev/webapps/finalizers": {"update"},
		"apps/deployments":                    {"get", "list", "watch", "create", "update"},
	}
	resources := []schema.GroupVersionResource{
		{Group: "demo.racekit.dev", Resource: "webapps"},
		{Group: "demo.racekit.dev", Resource: "webapps/status"},
		{Group: "demo.racekit.dev", Resource: "webapps/finalizers"},
		{Group: "apps", Resource: "deployments"},
		{Group: "apps", Resource: "deployments/scale"},
		{Resource: "pods"},
		{Resource: "secrets"},
		{Resource: "events"},
	}
	verbs := []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	got := map[string][]string{}
	for _, r := range resources {
		res, sub, _ := strings.Cut(r.Resource, "/")
		for _, verb := range verbs {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User:   serviceAccount,
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:racekit-system", "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: ns, Verb: verb, Group: r.Group, Resource: res, Subresource: sub,
				},
			}}
			assert.NilError(t, admin.Create(ctx, sar))
			if sar.Status.Allowed {
				key := strings.TrimPrefix(r.Group+"/"+r.Resource, "/")
				got[key] = append(got[key], verb)
			}
		}
	}
	sortVerbs := cmpopts.SortSlices(func(a, b string) bool { return a < b })
	assert.Assert(t, cmp.Equal(got, need, sortVerbs), "permissions of %s (-granted +needed):\n%s", serviceAccount, cmp.Diff(got, need, sortVerbs))
}
