package harness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/racekit/racekit/harness/language"
)

// seer reconciles a ConfigMap the way many controllers reconcile their
// objects: it reads it and, when data.seen lags data.value, copies one to
// the other with an update that carries the resourceVersion it read. A
// ConfigMap can ask it for another answer in data.ask: requeue, later
// (RequeueAfter 30s) or fail.
type seer struct{ c client.Client }

func (s *seer) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var cm corev1.ConfigMap
	if err := s.c.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	switch cm.Data["ask"] {
	case "requeue":
		return reconcile.Result{Requeue: true}, nil //nolint:staticcheck // what older reconcilers return
	case "later":
		return reconcile.Result{RequeueAfter: 30 * time.Second}, nil
	case "fail":
		return reconcile.Result{}, errors.New("asked to fail")
	}
	if cm.Data["seen"] == cm.Data["value"] {
		return reconcile.Result{}, nil
	}
	cm.Data["seen"] = cm.Data["value"]
	return reconcile.Result{}, s.c.Update(ctx, &cm)
}

// retrier is the seer with its update inside retry.RetryOnConflict, each
// attempt reading again: from its cache, when it has one.
type retrier struct{ seer }

func (r *retrier) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var res reconcile.Result
	err := retry.RetryOnConflict(language.ZeroDelayRetry(), func() error {
		var err error
		res, err = r.seer.Reconcile(ctx, req)
		return err
	})
	return res, err
}

// coreOnly knows ConfigMaps and the rest of core/v1, and no Deployment.
var coreOnly = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// testControllers are the controllers of the controller scripts
// (controllerScripts): the seer, live and cached, and two whose
// constructors fail.
func testControllers() []*Controller {
	build := func(in *Instance) (reconcile.Reconciler, error) { return &seer{c: in.Client}, nil }
	return []*Controller{
		{Name: "seer", Scheme: coreOnly, For: &corev1.ConfigMap{}, New: build},
		{Name: "cached", Scheme: kscheme.Scheme, For: &corev1.ConfigMap{}, Cache: []client.Object{&corev1.ConfigMap{}}, New: build},
		{Name: "cached-retry", Scheme: kscheme.Scheme, For: &corev1.ConfigMap{}, Cache: []client.Object{&corev1.ConfigMap{}},
			New: func(in *Instance) (reconcile.Reconciler, error) { return &retrier{seer{c: in.Client}}, nil }},
		{Name: "panics", Scheme: kscheme.Scheme, For: &corev1.Secret{}, New: func(*Instance) (reconcile.Reconciler, error) { panic("no luck") }},
		{Name: "refuses", Scheme: kscheme.Scheme, For: &corev1.Secret{}, New: func(*Instance) (reconcile.Reconciler, error) {
			return nil, errors.New("no registry URL")
		}},
	}
}

// controllerScripts are the folders of the scripts that race the test
// controllers (testControllers, runningControllers), each beside the
// package it documents: the controllers', running's, explore's, the racing
// proxy's and the views'. They run here, where every layer is composed.
var controllerScripts = []string{"testdata/controllers", "running/testdata", "explore/testdata", "auto/testdata", "proxy/testdata", "views/testdata"}

// controllerScriptFiles returns the scripts of controllerScripts; each
// folder must hold some.
func controllerScriptFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, dir := range controllerScripts {
		got, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
		assert.NilError(t, err)
		assert.Assert(t, len(got) > 0, "no script in %s", dir)
		files = append(files, got...)
	}
	return files
}

// TestControllerScripts runs the controller scripts (controllerScripts)
// with testControllers registered. A script with a want section must
// fail, at a line and with a message its regular expression matches; one
// without must pass. Each script runs as CheckNoise runs it, plain and
// with noise that cannot matter, and the two runs' verdicts must be the
// same (TestNoiseChangesNoVerdict, for the other folders): the plain run
// is the one judged, so that no script runs three times. It goes on past
// an assertion that fails, which changes no verdict of a script that
// must pass, and leaves the failure's message in the log of one that
// must fail.
func TestControllerScripts(t *testing.T) {
	for _, file := range controllerScriptFiles(t) {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			assert.NilError(t, err)
			_, want, hasWant := strings.Cut(string(data), "\n-- want --\n")
			want = strings.TrimSpace(want)
			nc, err := CheckNoise(context.Background(), controlPlane(t), ScriptOptions{Controllers: append(testControllers(), runningControllers()...)}, file)
			assert.NilError(t, err)
			assert.Equal(t, nc.Skipped, "", "the script did not run")
			if nc.Quiet != "" {
				t.Logf("without noise, only reading from the API server: %s", nc.Quiet)
			}
			for _, d := range nc.Differences {
				t.Errorf("%s: the noise changed a verdict: %s", filepath.Base(file), d)
			}
			out := nc.Log
			if !hasWant {
				assert.Assert(t, nc.Passed, "the script failed:\n%s", out)
				return
			}
			assert.Assert(t, !nc.Passed, "the script passed, but it must fail; output:\n%s", out)
			assert.Assert(t, regexp.MustCompile(want).MatchString(out), "output does not match %q:\n%s", want, out)
		})
	}
}

// TestRegistryRefuses checks what ScriptOptions.Check refuses before any
// scenario runs: controllers and commands that are unusable or named twice.
func TestRegistryRefuses(t *testing.T) {
	ok := testControllers()[0]
	noop := func(*Scenario, Invocation) error { return nil }
	tests := []struct {
		name string
		opts ScriptOptions
		want string
	}{
		{"controller twice", ScriptOptions{Controllers: []*Controller{ok, ok}}, "controller seer registered twice"},
		{"bad name", ScriptOptions{Controllers: []*Controller{{Name: "My Controller", Scheme: coreOnly, For: &corev1.ConfigMap{}, New: ok.New}}}, `bad controller name "My Controller"`},
		{"no New", ScriptOptions{Controllers: []*Controller{{Name: "x", Scheme: coreOnly, For: &corev1.ConfigMap{}}}}, "controller x has neither New"},
		{"no For", ScriptOptions{Controllers: []*Controller{{Name: "x", Scheme: coreOnly, New: ok.New}}}, "controller x has no For"},
		{"kind outside the scheme", ScriptOptions{Controllers: []*Controller{{Name: "x", Scheme: coreOnly, For: &corev1.ConfigMap{}, Cache: []client.Object{&corev1.ConfigMap{}, &appsv1.Deployment{}}, New: ok.New}}}, "controller x: "},
		{"command twice", ScriptOptions{Commands: []*Command{{Name: "mine", Group: "assert", Summary: "s", Run: noop}, {Name: "mine", Group: "assert", Summary: "s", Run: noop}}}, "command mine registered twice"},
		{"command over a built-in", ScriptOptions{Commands: []*Command{{Name: "field", Group: "assert", Summary: "s", Run: noop}}}, "command field registered twice"},
		{"command without Run", ScriptOptions{Commands: []*Command{{Name: "mine", Group: "assert", Summary: "s"}}}, "command mine has no Run"},
		{"command in no group", ScriptOptions{Commands: []*Command{{Name: "mine", Group: "checks", Summary: "s", Run: noop}}}, `command mine: bad group "checks"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Check()
			assert.ErrorContains(t, err, tc.want)
		})
	}
	assert.NilError(t, ScriptOptions{Controllers: testControllers(), Commands: []*Command{{Name: "mine", Group: "assert", Summary: "s", Run: noop}}}.Check())
}
