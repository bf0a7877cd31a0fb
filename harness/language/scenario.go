package language

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/racekit/racekit/harness/controlplane"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/hooks"
)

// SetupActor is the actor the scenario's setup steps (create) run as.
const SetupActor = "setup"

// ControllerActor is the actor a controller runs as unless a command says
// "as ACTOR".
const ControllerActor = "controller"

// Scenario is one running script: its namespace, its actors and their
// recorder, its hooks and snapshots, and the state each extension keeps
// for it (Key). It knows no controller, no running process and no
// exploration: those are extensions (Extension), which keep their own
// state.
type Scenario struct {
	Name      string
	Namespace string
	// Dir is the work folder that holds the script's archive files.
	Dir string

	ctx context.Context
	cp  *controlplane.ControlPlane
	rec *record.Recorder
	// hooks are the armed hooks, with where each was armed (hooks.go).
	hooks *hookBook
	// clients are the actors and the harness's own client (clients.go).
	clients *clients
	// snapshots are the objects get, list and watch keep (objects.go).
	snapshots *snapshots
	// reader is the scenario as a reader of old revisions.
	reader *controlplane.Reader
	// run is what the script's run holds: its options, its test, its
	// outcome so far, and the extensions' state (below).
	run *run
}

// NewScenario creates a namespace for a scenario named name, whose archive
// files are in dir.
func NewScenario(ctx context.Context, cp *controlplane.ControlPlane, name, dir string) (*Scenario, error) {
	sc := &Scenario{
		Name: name, Dir: dir, ctx: ctx, cp: cp, rec: &record.Recorder{},
		hooks: newHookBook(), snapshots: &snapshots{m: map[string]*unstructured.Unstructured{}},
		run: newRun(),
	}
	var err error
	if sc.clients, err = newClients(cp); err != nil {
		return nil, err
	}
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"generateName": namespacePrefix(name)},
	}}
	if ns, err = sc.clients.admin.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create namespace for %s: %w", name, err)
	}
	sc.Namespace = ns.GetName()
	sc.reader = &controlplane.Reader{Name: name, Done: ctx.Done()}
	sc.rec.SetNamespace(sc.Namespace)
	sc.hooks.set.OnFire = func(a *hooks.Armed, e hooks.Event) {
		sc.rec.Note(record.HookFiring{ID: a.ID, Trigger: a.Hook.String(), Action: a.Label, Caller: e.Call.Actor})
	}
	return sc, nil
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

func namespacePrefix(name string) string {
	s := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(s) > 40 {
		s = s[:40]
	}
	return "rk-" + s + "-"
}

// HistoryReader is the scenario as a reader of old revisions
// (controlplane.RevisionHolds): each layer that keeps a resourceVersion to
// read later (a watch from it, a mark, a hold at=) holds the history as
// this one reader, so that the scenario's own compaction, which gives up
// the reader's hold, never waits for a hold the scenario itself took.
func (sc *Scenario) HistoryReader() *controlplane.Reader { return sc.reader }

// Context is the scenario's context: what a command's calls should use.
func (sc *Scenario) Context() context.Context { return sc.ctx }

// ControlPlane is the control plane the scenario runs on.
func (sc *Scenario) ControlPlane() *controlplane.ControlPlane { return sc.cp }

// Recorder is the recorder of every actor's calls.
func (sc *Scenario) Recorder() *record.Recorder { return sc.rec }

// Hooks is the scenario's set of hooks, which every actor's transport
// fires.
func (sc *Scenario) Hooks() *hooks.Set { return sc.hooks.set }

// Mapper maps the kinds the API server serves to their resources, as the
// control plane discovered them: for a controller's own clients, whose
// discovery calls would otherwise fill the trace.
func (sc *Scenario) Mapper() meta.RESTMapper { return sc.cp.Mapper() }

// Changes returns a channel that is closed at the trace's next change (an
// exchange sent or answered, a hook firing): for a live view of the trace,
// such as racekit proxy's, which takes the channel, then reads Trace, then
// waits on the channel. It never polls.
func (sc *Scenario) Changes() <-chan struct{} { return sc.rec.Changes() }

// Trace returns what the scenario's actors have sent and received so far.
func (sc *Scenario) Trace() record.Trace { return sc.rec.Trace() }

// Options are the options the scenario runs with: for an extension that
// runs the script again (explore).
func (sc *Scenario) Options() Options { return sc.run.opts }

// T is the script's test, for the subtests an extension reports (explore);
// nil outside a script.
func (sc *Scenario) T() testscript.T { return sc.run.t }

// Started and Ended bound the scenario's wall time, from before its
// namespace was created to the end of its script.
func (sc *Scenario) Started() time.Time { return sc.run.started }

// Ended is when the scenario's script ended; zero while it runs.
func (sc *Scenario) Ended() time.Time {
	sc.run.mu.Lock()
	defer sc.run.mu.Unlock()
	return sc.run.ended
}

// Failed reports whether the scenario failed, once its script has ended.
func (sc *Scenario) Failed() bool {
	sc.run.mu.Lock()
	defer sc.run.mu.Unlock()
	return sc.run.failed
}

// Close runs what Defer deferred, last first: a cached controller's
// informers, the servers a controller's side started. The namespace stays:
// envtest runs no namespace controller to empty it, and the control plane
// goes with the process.
func (sc *Scenario) Close() {
	sc.run.mu.Lock()
	defers := sc.run.defers
	sc.run.defers = nil
	sc.run.mu.Unlock()
	for i := len(defers) - 1; i >= 0; i-- {
		defers[i]()
	}
}

// Defer runs f when the scenario ends, passed or failed, after the
// functions deferred later.
func (sc *Scenario) Defer(f func()) {
	sc.run.mu.Lock()
	defer sc.run.mu.Unlock()
	sc.run.defers = append(sc.run.defers, f)
}

// Shared returns the value the scenario keeps under key, made by create on
// first use: what every instance of a controller shares, such as a fake
// external service the controller calls. create may call Defer to clean
// up. It must not call Shared itself.
func (sc *Scenario) Shared(key string, create func() (any, error)) (any, error) {
	sc.run.mu.Lock()
	v, ok := sc.run.shared[key]
	sc.run.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := create()
	if err != nil {
		return nil, fmt.Errorf("shared %s: %w", key, err)
	}
	sc.run.mu.Lock()
	defer sc.run.mu.Unlock()
	if prev, ok := sc.run.shared[key]; ok {
		return prev, nil
	}
	sc.run.shared[key] = v
	return v, nil
}

// ZeroDelayRetry is retry.DefaultRetry without the waiting: the same number
// of attempts, so a scenario shows what production would do, but no delay,
// since hooks, not time, order the race.
func ZeroDelayRetry() wait.Backoff {
	return wait.Backoff{Steps: retry.DefaultRetry.Steps, Factor: 1}
}

// run is what one run of a script holds beside its namespace and actors.
type run struct {
	opts Options
	// cmds is every command the scenario may use, by name: the built-in
	// ones, the extensions' and the options' own.
	cmds map[string]*Command
	t    testscript.T
	// script is the script's text, without its archive's files, and
	// lines the table of its lines (lines.go).
	script string
	lines  *scriptLines

	mu sync.Mutex
	// started and ended bound its wall time; failed is set when it ends,
	// if it failed.
	started, ended time.Time
	failed         bool
	// failures and verdicts are what went wrong and what each line
	// decided, so far, as values (failure.go, verdict.go); stopped is set
	// when a command of racekit's stopped the script.
	failures []Failure
	verdicts []Verdict
	stopped  bool
	// services are the resources of services outside the API server that
	// the scenario's controllers call, which triggers and counts name
	// like API resources (AddService).
	services map[string]bool
	// state is each extension's state for the scenario, by Key (Value).
	state map[any]any
	// shared holds what Shared made, by key; defers run at Close.
	shared map[string]any
	defers []func()
}

func newRun() *run {
	return &run{started: time.Now(), services: map[string]bool{}, state: map[any]any{}, shared: map[string]any{}}
}

// AddService says that calls to resource go to a service outside the API
// server (a controller's registry, say), which triggers, counts and the
// referee's side-effect rule name like API resources.
func (sc *Scenario) AddService(resource string) {
	sc.run.mu.Lock()
	defer sc.run.mu.Unlock()
	sc.run.services[resource] = true
}

// Service reports whether resource is the resource of a service outside
// the API server (AddService).
func (sc *Scenario) Service(resource string) bool {
	sc.run.mu.Lock()
	defer sc.run.mu.Unlock()
	return sc.run.services[resource]
}
