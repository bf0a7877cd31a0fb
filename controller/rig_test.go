package controller_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"gotest.tools/v3/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/racekit/racekit/controller"
	"github.com/racekit/racekit/controller/api/v1alpha1"
	"github.com/racekit/racekit/controller/registry"
	"github.com/racekit/racekit/hooks"
)

// now is the time on the reconciler's clock.
var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// rig is one test's controller: a reconciler whose API and registry calls
// are logged and pass through hooks, a registry, and an unrecorded admin
// client for setup and checks, all in a namespace of the test's own.
type rig struct {
	t        *testing.T
	ctx      context.Context
	ns       string
	admin    client.Client
	hooks    *hooks.Set
	calls    *callLog
	registry *registry.Server
	// registryURL is where registry listens, for unrecorded checks.
	registryURL string
	metrics     *controller.Metrics
	r           *controller.Reconciler
	bumps       atomic.Int32
}

// rigOptions change how newRig builds the rig.
type rigOptions struct {
	// noRegistry turns registration off.
	noRegistry bool
	// registryHandler, if set, wraps the registry server's handler.
	registryHandler func(http.Handler) http.Handler
}

func newRig(t *testing.T, opts rigOptions) *rig {
	t.Helper()
	ctx := klog.NewContext(context.Background(), testr.New(t))
	adminCfg, err := cp.User("e2e-admin", "system:masters")
	assert.NilError(t, err)
	admin, err := client.New(adminCfg, client.Options{Scheme: controller.NewScheme()})
	assert.NilError(t, err)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rk-ctl-"}}
	assert.NilError(t, admin.Create(ctx, ns))

	rg := &rig{t: t, ctx: ctx, ns: ns.Name, admin: admin, hooks: &hooks.Set{}, calls: &callLog{}, metrics: controller.NewMetrics()}
	wrap := func(next http.RoundTripper) http.RoundTripper {
		return hooks.Wrap("controller", rg.hooks)(rg.calls.wrap(next, hooks.ParseRequest))
	}
	cfg, err := cp.User("controller", "system:masters")
	assert.NilError(t, err)
	cfg.Wrap(wrap)
	hc, err := rest.HTTPClientFor(cfg)
	assert.NilError(t, err)
	c, err := client.New(cfg, client.Options{Scheme: controller.NewScheme(), Mapper: cp.Mapper(), HTTPClient: hc})
	assert.NilError(t, err)

	ropts := controller.Options{
		Backoff: wait.Backoff{Steps: retry.DefaultRetry.Steps, Factor: 1}, // production steps, no delay
		Metrics: rg.metrics,
		Clock:   clocktesting.NewFakePassiveClock(now),
	}
	if !opts.noRegistry {
		rg.registry = registry.NewServer()
		var h http.Handler = rg.registry
		if opts.registryHandler != nil {
			h = opts.registryHandler(h)
		}
		hs := httptest.NewServer(h)
		t.Cleanup(hs.Close)
		rg.registryURL = hs.URL
		// The registry is no API server: its calls are read as a
		// service's.
		wrapService := func(next http.RoundTripper) http.RoundTripper {
			return hooks.WrapService("controller", rg.hooks)(rg.calls.wrap(next, hooks.ParseServiceRequest))
		}
		ropts.Registry = registry.NewClient(hs.URL, &http.Client{Transport: wrapService(hs.Client().Transport)})
	}
	rg.r = controller.New(c, ropts)
	return rg
}

// podTemplate is a valid pod template for Deployments a test creates.
func podTemplate(labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
	}
}

func (rg *rig) key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: rg.ns, Name: name}
}

// reconcile runs one reconcile of name and returns its error.
func (rg *rig) reconcile(name string) error {
	return rg.r.Reconcile(rg.ctx, rg.key(name))
}

// mustReconcile runs one reconcile of name, which must succeed, and drops
// the calls it made from the log.
func (rg *rig) mustReconcile(name string) {
	rg.t.Helper()
	assert.NilError(rg.t, rg.reconcile(name))
	rg.calls.take()
}

func (rg *rig) createApp(name string, replicas int32) *v1alpha1.WebApp {
	rg.t.Helper()
	app := &v1alpha1.WebApp{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: rg.ns},
		Spec:       v1alpha1.WebAppSpec{Replicas: replicas, Image: "nginx:1.27"},
	}
	assert.NilError(rg.t, rg.admin.Create(rg.ctx, app))
	return app
}

func (rg *rig) getApp(name string) *v1alpha1.WebApp {
	rg.t.Helper()
	app := &v1alpha1.WebApp{}
	assert.NilError(rg.t, rg.admin.Get(rg.ctx, rg.key(name), app))
	return app
}

// patch merge-patches obj as the admin, outside the controller's log.
func (rg *rig) patch(obj client.Object, patch string) error {
	return rg.admin.Patch(rg.ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)))
}

// nextLabel returns a merge patch that sets the label "bump" to a value it
// never returned before.
func (rg *rig) nextLabel() string {
	return fmt.Sprintf(`{"metadata":{"labels":{"bump":"%d"}}}`, rg.bumps.Add(1))
}

// arm runs action after the controller's matching call, on the occurrence
// given (hooks.Every for all), and fails the test if the action fails.
func (rg *rig) arm(match hooks.Matcher, occurrence int, action func() error) *hooks.Armed {
	match.Actor = "controller"
	a := rg.hooks.Arm(hooks.Hook{Point: hooks.After, Match: match, Occurrence: occurrence, Label: match.String(), Action: func(hooks.Event) error {
		return action()
	}})
	rg.t.Cleanup(func() {
		assert.NilError(rg.t, rg.hooks.Err(a))
	})
	return a
}

// callLog keeps the controller's calls as "verb resource/name[/sub] code".
type callLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *callLog) wrap(next http.RoundTripper, parse func(string, *http.Request) hooks.Call) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		c := parse("controller", req)
		resp, err := next.RoundTrip(req)
		code := "error"
		if err == nil {
			code = fmt.Sprint(resp.StatusCode)
		}
		// Registry names carry the namespace; the test's namespace is
		// random, so only the last segment is kept.
		obj := c.Resource + "/" + path.Base(c.Name)
		if c.Subresource != "" {
			obj += "/" + c.Subresource
		}
		if c.Verb != "watch" && c.Verb != "list" {
			l.mu.Lock()
			l.lines = append(l.lines, c.Verb+" "+obj+" "+code)
			l.mu.Unlock()
		}
		return resp, err
	})
}

// take returns the calls logged since the last take.
func (l *callLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
