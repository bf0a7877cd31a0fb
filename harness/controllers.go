package harness

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Controller is a controller that scenarios race, registered by name in
// ScriptOptions.Controllers. The harness knows no controller of its own:
// racekit's reference controller comes in this way, like anyone else's.
//
// Each scenario builds a controller afresh for every actor it runs as (an
// Instance), on that actor's first reconcile, so that two instances are two
// replicas sharing a cluster and nothing else.
type Controller struct {
	// Name is how scenarios name the controller: reconcile NAME ..., a
	// lower-case word such as memcached.
	Name string
	// Summary is one line for help.
	Summary string
	// Scheme knows For and every type the controller reads or writes.
	Scheme *runtime.Scheme
	// For is the kind the controller reconciles, such as
	// &v1alpha1.Memcached{}: reconcile RESOURCE/NAME must name one.
	For client.Object
	// Cache lists the kinds the controller's client reads from informers,
	// as a manager's client does. Empty, every read goes to the API server.
	// A cached read of a kind not listed fails, naming the kind.
	Cache []client.Object
	// New builds the reconciler of one instance. It runs once per actor
	// and scenario, before that instance's first reconcile; an error or a
	// panic fails the command that needed it. It may be nil when Run is
	// set.
	New func(in *Instance) (reconcile.Reconciler, error)
	// Run, if set, is the controller's long-running form, as its main
	// runs it: it builds its clients from in.Config (every call through
	// the scenario's hooks and recorder), watches in.Namespace only, and
	// returns when ctx is done. start runs it; a controller with Run and
	// no New can be started but not reconciled one step at a time.
	Run func(ctx context.Context, in *Instance) error
	// SideEffects names the resources of services outside the API server
	// that the controller calls through Instance.HTTPClient, such as
	// registrations. Scenarios hook and count them like API calls, and
	// one reconcile must call each at most once per verb: a side effect
	// belongs outside any retry.
	SideEffects []string
	// Check, if set, names the rules a reconcile broke, judged from what
	// its objects hold now (Scenario.Read) and its span of the trace; a
	// reconcile that fails lists them.
	Check func(sc *Scenario, span Span) []Finding
}

var controllerName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,40}$`)

// check reports what makes c unusable.
func (c *Controller) check() error {
	switch {
	case !controllerName.MatchString(c.Name):
		return fmt.Errorf("bad controller name %q: want a lower-case word such as memcached", c.Name)
	case c.Scheme == nil:
		return fmt.Errorf("controller %s has no Scheme", c.Name)
	case c.For == nil:
		return fmt.Errorf("controller %s has no For: the kind it reconciles", c.Name)
	case c.New == nil && c.Run == nil:
		return fmt.Errorf("controller %s has neither New, the function that builds its reconciler, nor Run, its running form", c.Name)
	}
	for _, o := range append([]client.Object{c.For}, c.Cache...) {
		if _, err := apiutil.GVKForObject(o, c.Scheme); err != nil {
			return fmt.Errorf("controller %s: %w", c.Name, err)
		}
	}
	return nil
}

// Instance is one controller as one actor runs it in one scenario: what
// Controller.New builds a reconciler from.
type Instance struct {
	Controller *Controller
	// Actor is the actor the instance runs as; Namespace is the
	// scenario's.
	Actor, Namespace string
	// Config reaches the API server as Actor: every call passes through
	// the scenario's hooks and recorder, and a reconcile that retries
	// without bound is stopped. A client-go controller builds its
	// clientsets from it.
	Config *rest.Config
	// Client is a controller-runtime client on Config, with the
	// controller's scheme. With Controller.Cache it reads those kinds from
	// the instance's informers; it writes to the API server. It is nil for
	// a controller that start runs: Run builds its own clients.
	Client client.Client

	sc         *Scenario
	reconciler reconcile.Reconciler
	cache      *controllerCache
}

// Scenario returns the scenario the instance runs in: for state shared by
// every instance (Scenario.Shared) and cleanup (Scenario.Defer).
func (in *Instance) Scenario() *Scenario { return in.sc }

// Reconciler returns what Controller.New built, for commands that read a
// controller's own counters.
func (in *Instance) Reconciler() reconcile.Reconciler { return in.reconciler }

// HTTPClient returns a client for a service outside the API server, named
// service in timelines: its calls pass through the scenario's hooks,
// recorder and budget as the instance's actor, like its API calls.
// Declare the resources it calls in Controller.SideEffects.
func (in *Instance) HTTPClient(service string) *http.Client {
	hc := in.sc.httpClient(in.Actor, service)
	hc.Transport = &guard{next: hc.Transport}
	return hc
}

// outcome is what one reconcile returned, or that a crash killed it
// (crashed, errCrashed wrapped): a killed process returns nothing, so a
// crashed reconcile is neither a success nor an error.
type outcome struct {
	res     reconcile.Result
	err     error
	crashed error
}

func (o outcome) String() string {
	switch {
	case o.crashed != nil:
		return "crashed"
	case o.err != nil:
		return "error: " + o.err.Error()
	case o.res.RequeueAfter > 0:
		return "requeue-after=" + o.res.RequeueAfter.String()
	case o.res.Requeue: //nolint:staticcheck // controller-runtime still honours it
		return "requeue"
	}
	return "done"
}

// again reports whether a workqueue would run the reconcile again: a
// crashed one, the restarted process's would.
func (o outcome) again() bool {
	return o.crashed != nil || o.err != nil || o.res.RequeueAfter > 0 || o.res.Requeue //nolint:staticcheck
}

// Span is the part of the trace one reconcile made: the exchanges from
// sequence number From to To, of which Actor's are the reconcile's own (a
// hook's writer may have called in between).
type Span struct {
	Controller string
	Actor      string
	// Object is what was reconciled, as the trace names it:
	// memcacheds/cache.
	Object string
	// Request is what Reconcile was given.
	Request  reconcile.Request
	From, To int
	// runaway is errRunaway, wrapped, when the guard stopped the
	// reconcile; crashed is errCrashed, wrapped, when a crash hook ended
	// it.
	runaway, crashed error
	// out is what the reconcile returned, for result: kept here, not in
	// the instance, which a crash throws away.
	out outcome
}

// controllerNames returns the registered controllers' names, sorted.
func (sc *Scenario) controllerNames() []string {
	var out []string
	for n := range sc.controllers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// controller returns the controller called name.
func (sc *Scenario) controller(name string) (*Controller, error) {
	c, ok := sc.controllers[name]
	if ok {
		return c, nil
	}
	if len(sc.controllers) == 0 {
		return nil, usageErr("unknown controller %q: no controller is registered (ScriptOptions.Controllers, racekit.Setup.Controllers)", name)
	}
	names := sc.controllerNames()
	return nil, usageErr("unknown controller %q%s; controllers are %s", name, suggest(name, names), strings.Join(names, ", "))
}

// forResource returns the resource c reconciles.
func (sc *Scenario) forResource(c *Controller) (schema.GroupVersionResource, error) {
	gvk, err := apiutil.GVKForObject(c.For, c.Scheme)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	m, err := sc.cp.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return schema.GroupVersionResource{}, fmt.Errorf("controller %s reconciles %s, which the API server does not serve: install its CRD: %w", c.Name, gvk.Kind, err)
	}
	return m.Resource, nil
}

// target reads "[CONTROLLER] RESOURCE/NAME" from the front of args and
// returns the controller, the object and the arguments left. Without a
// controller name, the one controller that reconciles the resource is
// meant.
func (sc *Scenario) target(args []string) (*Controller, ref, []string, error) {
	if len(args) > 1 && !strings.Contains(args[0], "/") {
		c, err := sc.controller(args[0])
		if err != nil {
			return nil, ref{}, nil, err
		}
		r, err := sc.object(args[1])
		if err != nil {
			return nil, ref{}, nil, usageErr("%v", err)
		}
		if err := sc.checkReconciles(c, r); err != nil {
			return nil, ref{}, nil, err
		}
		return c, r, args[2:], nil
	}
	r, err := sc.object(args[0])
	if err != nil {
		return nil, ref{}, nil, usageErr("%v", err)
	}
	var found []*Controller
	for _, n := range sc.controllerNames() {
		c := sc.controllers[n]
		if c.New == nil {
			continue // it only runs on its own: start, not reconcile
		}
		if gvr, err := sc.forResource(c); err == nil && gvr.GroupResource() == r.gvr.GroupResource() {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 1:
		return found[0], r, args[1:], nil
	case 0:
		names := sc.controllerNames()
		if len(names) == 0 {
			return nil, ref{}, nil, usageErr("no controller is registered to reconcile %s", r.gvr.Resource)
		}
		return nil, ref{}, nil, usageErr("no registered controller reconciles %s; controllers are %s", r.gvr.Resource, strings.Join(names, ", "))
	}
	var names []string
	for _, c := range found {
		names = append(names, c.Name)
	}
	list := strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	return nil, ref{}, nil, usageErr("%s reconcile %s: name the one you mean, reconcile CONTROLLER %s", list, r.gvr.Resource, r)
}

// checkReconciles checks that c reconciles r's resource, and says whether c's
// scheme knows r's kind at all when it does not.
func (sc *Scenario) checkReconciles(c *Controller, r ref) error {
	gvr, err := sc.forResource(c)
	if err != nil {
		return err
	}
	if gvr.GroupResource() == r.gvr.GroupResource() && r.subresource == "" {
		return nil
	}
	if gvk, err := sc.cp.mapper.KindFor(r.gvr); err == nil && !c.Scheme.Recognizes(gvk) {
		return usageErr("controller %s has no scheme for %s (%s): it reconciles %s", c.Name, gvk.Kind, gvk.GroupVersion(), gvr.Resource)
	}
	return usageErr("controller %s reconciles %s, not %s", c.Name, gvr.Resource, r)
}

// instance returns c as actor runs it in the scenario, built on first use:
// its client (cached or live), then its reconciler.
func (sc *Scenario) instance(c *Controller, actor string) (*Instance, error) {
	if c.New == nil {
		return nil, usageErr("controller %s only runs on its own, with no reconciler to call once: start it with start %s, then await what it must do", c.Name, c.Name)
	}
	key := c.Name + "/" + actor
	sc.mu.Lock()
	in, ok := sc.instances[key]
	sc.mu.Unlock()
	if ok {
		return in, nil
	}
	a, err := sc.Actor(actor)
	if err != nil {
		return nil, err
	}
	// The guard sits outside the hooks and the recorder: a call it stops
	// is never sent, so it neither fires a hook nor shows in the trace.
	cfg := rest.CopyConfig(a.Config)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return &guard{next: next} })
	in = &Instance{Controller: c, Actor: actor, Namespace: sc.Namespace, Config: cfg, sc: sc}
	opts := client.Options{Scheme: c.Scheme, Mapper: sc.cp.mapper}
	ccfg := cfg
	if len(c.Cache) > 0 {
		if in.cache, err = sc.startCache(actor, cfg, c.Scheme, c.Cache); err != nil {
			return nil, fmt.Errorf("controller %s as %s: %w", c.Name, actor, err)
		}
		sc.Defer(in.cache.close)
		ccfg = rest.CopyConfig(cfg)
		ccfg.Wrap(sc.syncAfterWrite(in.cache))
		opts.Cache = &client.CacheOptions{Reader: in.cache.cache}
	}
	if opts.HTTPClient, err = rest.HTTPClientFor(ccfg); err != nil {
		return nil, fmt.Errorf("controller %s as %s: http client: %w", c.Name, actor, err)
	}
	if in.Client, err = client.New(ccfg, opts); err != nil {
		return nil, fmt.Errorf("controller %s as %s: client: %w", c.Name, actor, err)
	}
	if in.reconciler, err = newReconciler(in); err != nil {
		return nil, fmt.Errorf("build controller %s as %s: %w", c.Name, actor, err)
	}
	sc.mu.Lock()
	sc.instances[key] = in
	sc.mu.Unlock()
	return in, nil
}

// newReconciler calls Controller.New, turning a panic into an error.
func newReconciler(in *Instance) (r reconcile.Reconciler, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("New panicked: %v\n%s", p, debug.Stack())
		}
	}()
	r, err = in.Controller.New(in)
	if err == nil && r == nil {
		err = fmt.Errorf("New returned no reconciler and no error")
	}
	return r, err
}

// Instance returns the instance of the controller called controller that
// runs as actor, if it has reconciled in this scenario.
func (sc *Scenario) Instance(controller, actor string) (*Instance, bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	in, ok := sc.instances[controller+"/"+actor]
	return in, ok
}

// cached returns the scenario's instances that read from a cache.
func (sc *Scenario) cached() []*Instance {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var out []*Instance
	for _, in := range sc.instances {
		if in.cache != nil {
			out = append(out, in)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Actor+out[i].Controller.Name < out[j].Actor+out[j].Controller.Name })
	return out
}

// catchUpAll waits until every cached instance's cache holds the
// scenario's writes (held resources aside): after a hook's action, so that
// what the controller reads next does not depend on when an event lands.
func (sc *Scenario) catchUpAll() error {
	for _, in := range sc.cached() {
		if err := sc.catchUp(in.cache); err != nil {
			return err
		}
	}
	return nil
}

// lastSeq returns the sequence number of the last exchange recorded.
func (sc *Scenario) lastSeq() int {
	xs := sc.Trace().Exchanges()
	if len(xs) == 0 {
		return 0
	}
	return xs[len(xs)-1].Seq
}

// reconcile runs one reconcile of r by in, with a budget of calls, once
// the instance's cache holds every write so far, and returns its span of
// the trace and what Reconcile returned.
func (sc *Scenario) reconcile(in *Instance, r ref) (Span, outcome, error) {
	if in.cache != nil {
		if err := sc.catchUp(in.cache); err != nil {
			return Span{}, outcome{}, err
		}
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: r.name}}
	if r.namespaced {
		req.Namespace = sc.Namespace
	}
	ctx, b := withBudget(sc.ctx, in)
	span := Span{Controller: in.Controller.Name, Actor: in.Actor, Object: r.String(), Request: req, From: sc.lastSeq() + 1}
	out := callReconcile(ctx, in.reconciler, req)
	span.To = sc.lastSeq()
	span.runaway = b.overrun()
	span.crashed = b.abort.Err()
	if span.crashed != nil {
		// What Reconcile returned once its calls failed is no answer: a
		// killed process returns nothing.
		out = outcome{crashed: span.crashed}
	}
	span.out = out
	sc.mu.Lock()
	sc.reconciles = append(sc.reconciles, span)
	if span.crashed != nil {
		// A killed process keeps nothing: the next reconcile builds the
		// instance afresh, client, cache and all.
		delete(sc.instances, in.Controller.Name+"/"+in.Actor)
	}
	sc.mu.Unlock()
	if span.crashed != nil && in.cache != nil {
		in.cache.close()
	}
	return span, out, nil
}

// callReconcile calls Reconcile, turning a panic into an error, as
// controller-runtime does by default.
func callReconcile(ctx context.Context, r reconcile.Reconciler, req reconcile.Request) (out outcome) {
	defer func() {
		if p := recover(); p != nil {
			out = outcome{err: fmt.Errorf("panic: %v [recovered]\n%s", p, debug.Stack())}
		}
	}()
	res, err := r.Reconcile(ctx, req)
	return outcome{res: res, err: err}
}
