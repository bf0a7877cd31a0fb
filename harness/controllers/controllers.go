package controllers

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/referee"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	Check func(sc *language.Scenario, span Span) []referee.Finding
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

	sc         *language.Scenario
	reconciler reconcile.Reconciler
	cache      *controllerCache
}

// Scenario returns the scenario the instance runs in: for state shared by
// every instance (Scenario.Shared) and cleanup (Scenario.Defer).
func (in *Instance) Scenario() *language.Scenario { return in.sc }

// Reconciler returns what Controller.New built, for commands that read a
// controller's own counters.
func (in *Instance) Reconciler() reconcile.Reconciler { return in.reconciler }

// HTTPClient returns a client for a service outside the API server, named
// service in timelines: its calls pass through the scenario's hooks,
// recorder and budget as the instance's actor, like its API calls.
// Declare the resources it calls in Controller.SideEffects.
func (in *Instance) HTTPClient(service string) *http.Client {
	hc := in.sc.ServiceClient(in.Actor, service)
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
func controllerNames(sc *language.Scenario) []string {
	var out []string
	for n := range stateOf(sc).registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// controller returns the controller called name.
func controller(sc *language.Scenario, name string) (*Controller, error) {
	c, ok := stateOf(sc).registry[name]
	if ok {
		return c, nil
	}
	if len(stateOf(sc).registry) == 0 {
		return nil, language.UsageError("unknown controller %q: no controller is registered (ScriptOptions.Controllers, racekit.Setup.Controllers)", name)
	}
	names := controllerNames(sc)
	return nil, language.UsageError("unknown controller %q%s; controllers are %s", name, language.Suggest(name, names), strings.Join(names, ", "))
}

// forResource returns the resource c reconciles.
func forResource(sc *language.Scenario, c *Controller) (schema.GroupVersionResource, error) {
	gvk, err := apiutil.GVKForObject(c.For, c.Scheme)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	m, err := sc.Mapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return schema.GroupVersionResource{}, fmt.Errorf("controller %s reconciles %s, which the API server does not serve: install its CRD: %w", c.Name, gvk.Kind, err)
	}
	return m.Resource, nil
}

// target reads "[CONTROLLER] RESOURCE/NAME" from the front of args and
// returns the controller, the object and the arguments left. Without a
// controller name, the one controller that reconciles the resource is
// meant.
func target(sc *language.Scenario, args []string) (*Controller, language.Ref, []string, error) {
	if len(args) > 1 && !strings.Contains(args[0], "/") {
		c, err := controller(sc, args[0])
		if err != nil {
			return nil, language.Ref{}, nil, err
		}
		r, err := sc.Object(args[1])
		if err != nil {
			return nil, language.Ref{}, nil, language.UsageError("%v", err)
		}
		if err := checkReconciles(sc, c, r); err != nil {
			return nil, language.Ref{}, nil, err
		}
		return c, r, args[2:], nil
	}
	r, err := sc.Object(args[0])
	if err != nil {
		return nil, language.Ref{}, nil, language.UsageError("%v", err)
	}
	var found []*Controller
	for _, n := range controllerNames(sc) {
		c := stateOf(sc).registry[n]
		if c.New == nil {
			continue // it only runs on its own: start, not reconcile
		}
		if gvr, err := forResource(sc, c); err == nil && gvr.GroupResource() == r.GVR.GroupResource() {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 1:
		return found[0], r, args[1:], nil
	case 0:
		names := controllerNames(sc)
		if len(names) == 0 {
			return nil, language.Ref{}, nil, language.UsageError("no controller is registered to reconcile %s", r.GVR.Resource)
		}
		return nil, language.Ref{}, nil, language.UsageError("no registered controller reconciles %s; controllers are %s", r.GVR.Resource, strings.Join(names, ", "))
	}
	var names []string
	for _, c := range found {
		names = append(names, c.Name)
	}
	list := strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	return nil, language.Ref{}, nil, language.UsageError("%s reconcile %s: name the one you mean, reconcile CONTROLLER %s", list, r.GVR.Resource, r)
}

// checkReconciles checks that c reconciles r's resource, and says whether c's
// scheme knows r's kind at all when it does not.
func checkReconciles(sc *language.Scenario, c *Controller, r language.Ref) error {
	gvr, err := forResource(sc, c)
	if err != nil {
		return err
	}
	if gvr.GroupResource() == r.GVR.GroupResource() && r.Subresource == "" {
		return nil
	}
	if gvk, err := sc.Mapper().KindFor(r.GVR); err == nil && !c.Scheme.Recognizes(gvk) {
		return language.UsageError("controller %s has no scheme for %s (%s): it reconciles %s", c.Name, gvk.Kind, gvk.GroupVersion(), gvr.Resource)
	}
	return language.UsageError("controller %s reconciles %s, not %s", c.Name, gvr.Resource, r)
}
