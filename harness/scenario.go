package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/racekit/racekit/harness/proxy"
	"github.com/racekit/racekit/hooks"
)

// Actor is one client in a scenario: the controller, a named writer, or the
// scenario's own setup steps. Each has its own user, user agent and field
// manager, and every call it makes passes through the scenario's hooks and
// recorder.
type Actor struct {
	Name    string
	Config  *rest.Config
	Dynamic dynamic.Interface
}

// SetupActor is the actor the scenario's setup steps (create) run as.
const SetupActor = "setup"

// ControllerActor is the actor a controller runs as unless a command says
// "as ACTOR".
const ControllerActor = "controller"

// Scenario is the state of one running script: its namespace, actors, hooks,
// recording and snapshots.
type Scenario struct {
	Name      string
	Namespace string
	// Dir is the work folder that holds the script's archive files.
	Dir string
	// Started and Ended bound the scenario's wall time, from before its
	// namespace was created to the end of its script.
	Started, Ended time.Time
	// Failed is set when the script ends, if it failed.
	Failed bool

	ctx   context.Context
	cp    *ControlPlane
	rec   *Recorder
	hooks *hooks.Set
	// admin is the harness's own client, unrecorded; own counts its calls.
	admin dynamic.Interface
	own   ownCalls

	// controllers and commands are what the scenario may use: the
	// registered controllers, by name, and every command, the built-in
	// ones and those ScriptOptions.Commands adds.
	controllers map[string]*Controller
	commands    map[string]*Command

	mu        sync.Mutex
	actors    map[string]*Actor
	snapshots map[string]*unstructured.Unstructured
	armed     []*armedHook
	reported  map[*hooks.Armed]int // hook errors already reported
	// identities are the actors declared with the actor command, who
	// authenticate as someone other than themselves in system:masters.
	identities map[string]identity
	// instances are the controllers as actors run them, by
	// "controller/actor" (controllers.go).
	instances map[string]*Instance
	// reconciles are the spans of the trace each reconcile made.
	reconciles []Span
	// shared holds what Shared made, by key; defers run at Close.
	shared map[string]any
	defers []func()
	// bumps counts the bump command's changes, for their values.
	bumps int
	// verifyReads checks each read answered from the trace against a GET
	// (ScriptOptions.VerifyReads).
	verifyReads bool
	// opts are the options the scenario runs with, for the
	// interleavings an explore line runs (explore.go).
	opts ScriptOptions
	// t is the script's test, for the subtests explore reports.
	t testscript.T
	// exploring is set once an explore line has run: the lines under it
	// are the explorer's, run in each interleaving, not here.
	exploring bool
	// explored is what the scenario's explore line found.
	explored *ExploreReport
	// exploreFrom is the last sequence number before an explore
	// workload's calls, noted by the learning run's marker.
	exploreFrom int
	// failures are what went wrong so far, as values (failure.go).
	failures []Failure
	// verdicts are what each assertion and each failure decided so far
	// (verdict.go).
	verdicts []Verdict
	// stopped is set when a command of racekit's stopped the script.
	stopped bool
	// runners are the names under which controllers and processes run on
	// their own, each with its lives (lives.go).
	runners map[string]*runner
	// proxy is the racing proxy, once spawn or racekit proxy needed it;
	// proxied are the actors it knows, and proxyLog what it said of
	// requests it could not serve (spawn.go).
	proxy    *proxy.Server
	proxied  map[string]bool
	proxyLog *tail
	// cacheTimeout bounds each wait for a cached controller's cache to
	// catch up (cache.go); zero means DefaultCacheTimeout.
	cacheTimeout time.Duration
	// flight knows each actor's calls in flight, hooks and all, for idle
	// (inflight.go).
	flight inFlight
}

// armedHook is a hook with where the script armed it.
type armedHook struct {
	*hooks.Armed
	pos string // file:line of the on command
}

// NewScenario creates a namespace for a scenario named name, whose archive
// files are in dir.
func NewScenario(ctx context.Context, cp *ControlPlane, name, dir string) (*Scenario, error) {
	started := time.Now()
	sc := &Scenario{
		Name: name, Dir: dir, Started: started,
		ctx: ctx, cp: cp, rec: &Recorder{}, hooks: &hooks.Set{},
		actors: map[string]*Actor{}, snapshots: map[string]*unstructured.Unstructured{},
		reported: map[*hooks.Armed]int{}, identities: map[string]identity{}, instances: map[string]*Instance{},
		controllers: map[string]*Controller{}, commands: commands, shared: map[string]any{},
		proxyLog: newTail(16 << 10),
	}
	admin := rest.CopyConfig(cp.admin)
	admin.Wrap(sc.own.wrap)
	var err error
	if sc.admin, err = dynamic.NewForConfig(admin); err != nil {
		return nil, fmt.Errorf("admin client: %w", err)
	}
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"generateName": namespacePrefix(name)},
	}}
	if ns, err = sc.admin.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create namespace for %s: %w", name, err)
	}
	sc.Namespace = ns.GetName()
	sc.hooks.OnFire = func(a *hooks.Armed, e hooks.Event) {
		sc.rec.Note(HookFiring{ID: a.ID, Trigger: a.Hook.String(), Action: a.Label, Caller: e.Call.Actor})
	}
	return sc, nil
}

// ownCalls counts what the harness itself asks the API server for one
// scenario: its namespace and the reads behind assertions. They are not in
// the trace, which shows the actors alone, but they are server time all the
// same, and the benchmarks report them.
type ownCalls struct {
	mu sync.Mutex
	n  int
	d  time.Duration
}

// wrap is for rest.Config.Wrap. Like the recorder, it counts a call as
// ended when its body has been read.
func (o *ownCalls) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		start := time.Now()
		resp, err := next.RoundTrip(req)
		if err == nil {
			var body []byte
			body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
		}
		o.mu.Lock()
		o.n++
		o.d += time.Since(start)
		o.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return resp, nil
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// OwnRoundTrips returns how many calls the harness itself made to the API
// server for the scenario, outside the trace (its namespace, the reads
// behind assertions), and their summed round-trip time.
func (sc *Scenario) OwnRoundTrips() (int, time.Duration) {
	sc.own.mu.Lock()
	defer sc.own.mu.Unlock()
	return sc.own.n, sc.own.d
}

// Close runs what Defer deferred, last first: a cached controller's
// informers, the servers a controller's side started. The namespace stays:
// envtest runs no namespace controller to empty it, and the control plane
// goes with the process.
func (sc *Scenario) Close() {
	sc.mu.Lock()
	defers := sc.defers
	sc.defers = nil
	sc.mu.Unlock()
	for i := len(defers) - 1; i >= 0; i-- {
		defers[i]()
	}
}

// Defer runs f when the scenario ends, passed or failed, after the
// functions deferred later.
func (sc *Scenario) Defer(f func()) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.defers = append(sc.defers, f)
}

// Shared returns the value the scenario keeps under key, made by create on
// first use: what every instance of a controller shares, such as a fake
// external service the controller calls. create may call Defer to clean
// up. It must not call Shared itself.
func (sc *Scenario) Shared(key string, create func() (any, error)) (any, error) {
	sc.mu.Lock()
	v, ok := sc.shared[key]
	sc.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := create()
	if err != nil {
		return nil, fmt.Errorf("shared %s: %w", key, err)
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if prev, ok := sc.shared[key]; ok {
		return prev, nil
	}
	sc.shared[key] = v
	return v, nil
}

// Context is the scenario's context: what a command's calls should use.
func (sc *Scenario) Context() context.Context { return sc.ctx }

// Read returns the object named as scenarios name it (deployments/web,
// memcacheds/cache/status) as the API server holds it, outside the
// recording: for assertions, which must not change the trace they check.
func (sc *Scenario) Read(object string) (*unstructured.Unstructured, error) {
	r, err := sc.object(object)
	if err != nil {
		return nil, err
	}
	return sc.read(r)
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

func namespacePrefix(name string) string {
	s := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(s) > 40 {
		s = s[:40]
	}
	return "rk-" + s + "-"
}

// Mapper maps the kinds the API server serves to their resources, as the
// control plane discovered them: for a controller's own clients, whose
// discovery calls would otherwise fill the trace.
func (sc *Scenario) Mapper() meta.RESTMapper { return sc.cp.mapper }

// Changes returns a channel that is closed at the trace's next change (an
// exchange sent or answered, a hook firing): for a live view of the trace,
// such as racekit proxy's, which takes the channel, then reads Trace, then
// waits on the channel. It never polls.
func (sc *Scenario) Changes() <-chan struct{} { return sc.rec.changes() }

// Trace returns what the scenario's actors have sent and received so far.
func (sc *Scenario) Trace() Trace { return sc.rec.Trace() }

var actorName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}$`)

// Actor returns the actor called name, creating it on first use.
func (sc *Scenario) Actor(name string) (*Actor, error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if a, ok := sc.actors[name]; ok {
		return a, nil
	}
	if !actorName.MatchString(name) {
		return nil, fmt.Errorf("bad actor name %q: want a lower-case name such as bob or controller", name)
	}
	var cfg *rest.Config
	var err error
	if id, ok := sc.identities[name]; ok {
		cfg, err = sc.cp.declaredUser(id)
	} else {
		cfg, err = sc.cp.User(name, "system:masters")
	}
	if err != nil {
		return nil, err
	}
	// The API server takes the field manager from the user agent up to
	// the first slash, so each actor manages its fields under its name.
	cfg.UserAgent = name + "/racekit"
	cfg.Wrap(sc.rec.Wrap(name))
	cfg.Wrap(hooks.Wrap(name, sc.hooks))
	cfg.Wrap(sc.flight.wrap(name))
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", name, err)
	}
	a := &Actor{Name: name, Config: cfg, Dynamic: dc}
	sc.actors[name] = a
	return a, nil
}

// httpClient returns a plain HTTP client for service, outside the API
// server, whose calls, like the API calls, pass through the scenario's
// hooks and recorder as actor (Instance.HTTPClient).
func (sc *Scenario) httpClient(actor, service string) *http.Client {
	base := http.DefaultTransport.(*http.Transport).Clone()
	return &http.Client{Transport: sc.flight.wrap(actor)(hooks.WrapService(actor, sc.hooks)(sc.rec.wrapService(actor, service)(base)))}
}

// sideEffect reports whether resource is a registered controller's call
// outside the API server (Controller.SideEffects).
func (sc *Scenario) sideEffect(resource string) bool {
	for _, c := range sc.controllers {
		if contains(c.SideEffects, resource) {
			return true
		}
	}
	return false
}

// ZeroDelayRetry is retry.DefaultRetry without the waiting: the same number
// of attempts, so a scenario shows what production would do, but no delay,
// since hooks, not time, order the race.
func ZeroDelayRetry() wait.Backoff {
	return wait.Backoff{Steps: retry.DefaultRetry.Steps, Factor: 1}
}

// ref is an object a scenario names: resource/name[/subresource].
type ref struct {
	gvr         schema.GroupVersionResource
	namespaced  bool
	name        string
	subresource string
}

// object resolves "deployments/web" (or "deployment/web", "webapps/web/status").
func (sc *Scenario) object(arg string) (ref, error) {
	parts := strings.SplitN(arg, "/", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return ref{}, fmt.Errorf("bad object %q: want RESOURCE/NAME, such as deployments/web", arg)
	}
	gvr, namespaced, err := sc.cp.resource(parts[0])
	if err != nil {
		return ref{}, err
	}
	r := ref{gvr: gvr, namespaced: namespaced, name: parts[1]}
	if len(parts) == 3 {
		r.subresource = parts[2]
	}
	return r, nil
}

// String renders r as it appears in traces.
func (r ref) String() string {
	s := r.gvr.Resource + "/" + r.name
	if r.subresource != "" {
		s += "/" + r.subresource
	}
	return s
}

// resourceClient returns actor's client for r's resource in the scenario's
// namespace.
func (sc *Scenario) resourceClient(a *Actor, r ref) dynamic.ResourceInterface {
	if r.namespaced {
		return a.Dynamic.Resource(r.gvr).Namespace(sc.Namespace)
	}
	return a.Dynamic.Resource(r.gvr)
}

// read returns r as the API server holds it, for assertions, outside the
// recording: assertions must not change the trace they check.
//
// Most of the time the trace already says: the last answer the server gave
// about r (to a GET, a create, an update or a patch) is the object as
// stored, and nothing has touched it since (Recorder.lastKnown). Otherwise
// (after a 409, a delete, a dry run, or a write to its collection such as
// a deletecollection) read sends a GET as the harness
// itself. With ScriptOptions.VerifyReads, every answer taken from the trace
// is checked against a GET.
//
// A subresource is always read with a GET of that subresource: the trace
// knows objects, not subresources, and a subresource may be an object of
// another kind (a Deployment's scale is a Scale).
func (sc *Scenario) read(r ref) (*unstructured.Unstructured, error) {
	if r.subresource != "" {
		return sc.get(r)
	}
	key := objectKey{group: r.gvr.Group, resource: r.gvr.Resource, name: r.name}
	if r.namespaced {
		key.namespace = sc.Namespace
	}
	obj, ok := sc.rec.lastKnown(key)
	if !ok || sc.opts.readServer {
		return sc.get(r)
	}
	if sc.verifyReads {
		if err := sc.verify(r, obj); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// get GETs r, or its subresource, as the harness itself.
func (sc *Scenario) get(r ref) (*unstructured.Unstructured, error) {
	cl := sc.admin.Resource(r.gvr)
	if r.namespaced {
		return cl.Namespace(sc.Namespace).Get(sc.ctx, r.name, metav1.GetOptions{}, subresources(r)...)
	}
	return cl.Get(sc.ctx, r.name, metav1.GetOptions{}, subresources(r)...)
}

// verify checks obj, the trace's copy of r, against a GET.
func (sc *Scenario) verify(r ref, obj *unstructured.Unstructured) error {
	fresh, err := sc.get(r)
	if err != nil {
		return fmt.Errorf("verify the trace's copy of %s: %w", r, err)
	}
	if diff := cmp.Diff(fresh.Object, obj.Object); diff != "" {
		return fmt.Errorf("the trace's copy of %s differs from the API server's (-server +trace):\n%s", r, diff)
	}
	return nil
}

// arm adds a hook armed at pos.
func (sc *Scenario) arm(h hooks.Hook, pos string) *armedHook {
	a := &armedHook{Armed: sc.hooks.Arm(h), pos: pos}
	sc.mu.Lock()
	sc.armed = append(sc.armed, a)
	sc.mu.Unlock()
	return a
}

// hookByID returns the hook armed id-th.
func (sc *Scenario) hookByID(id int) (*armedHook, bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if id < 1 || id > len(sc.armed) {
		return nil, false
	}
	return sc.armed[id-1], true
}

// hookErrors returns the hook action errors not reported before, each
// naming the hook and where it was armed.
func (sc *Scenario) hookErrors() []Failure {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var out []Failure
	for _, a := range sc.armed {
		err := sc.hooks.Err(a.Armed)
		if err == nil {
			continue
		}
		msgs := strings.Split(err.Error(), "\n")
		for _, m := range msgs[sc.reported[a.Armed]:] {
			out = append(out, Failure{Kind: FailHookAction, Command: a.Label, Message: m,
				Hook: &FailedHook{ID: a.ID, Trigger: a.Hook.String(), Armed: a.pos}})
		}
		sc.reported[a.Armed] = len(msgs)
	}
	return out
}

// unfired returns a failure for each armed hook that never fired.
func (sc *Scenario) unfired() []Failure {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var out []Failure
	for _, a := range sc.armed {
		if sc.hooks.Fired(a.Armed) == 0 {
			out = append(out, Failure{Kind: FailUnfired, Command: a.Label, Message: "no matching call was made after it was armed",
				Hook: &FailedHook{ID: a.ID, Trigger: a.Hook.String(), Armed: a.pos}})
		}
	}
	return out
}
