package controllers

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"sort"

	"github.com/racekit/racekit/harness/language"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// instance returns c as actor runs it in the scenario, built on first use:
// its client (cached or live), then its reconciler.
func instance(sc *language.Scenario, c *Controller, actor string) (*Instance, error) {
	st := stateOf(sc)
	if c.New == nil {
		return nil, language.UsageError("controller %s only runs on its own, with no reconciler to call once: start it with start %s, then await what it must do", c.Name, c.Name)
	}
	key := c.Name + "/" + actor
	st.mu.Lock()
	in, ok := st.instances[key]
	st.mu.Unlock()
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
	opts := client.Options{Scheme: c.Scheme, Mapper: sc.Mapper()}
	ccfg := cfg
	if len(c.Cache) > 0 {
		if in.cache, err = startCache(sc, actor, cfg, c.Scheme, c.Cache); err != nil {
			return nil, fmt.Errorf("controller %s as %s: %w", c.Name, actor, err)
		}
		sc.Defer(in.cache.close)
		ccfg = rest.CopyConfig(cfg)
		ccfg.Wrap(syncAfterWrite(sc, in.cache))
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
	st.mu.Lock()
	st.instances[key] = in
	st.mu.Unlock()
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
func InstanceOf(sc *language.Scenario, controller, actor string) (*Instance, bool) {
	st := stateOf(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	in, ok := st.instances[controller+"/"+actor]
	return in, ok
}

// cached returns the scenario's instances that read from a cache.
func cached(sc *language.Scenario) []*Instance {
	st := stateOf(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []*Instance
	for _, in := range st.instances {
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
func catchUpAll(sc *language.Scenario) error {
	for _, in := range cached(sc) {
		if err := catchUp(sc, in.cache); err != nil {
			return err
		}
	}
	return nil
}

// reconcileOnce runs one reconcile of r by in, with a budget of calls, once
// the instance's cache holds every write so far, and returns its span of
// the trace and what Reconcile returned.
func reconcileOnce(sc *language.Scenario, in *Instance, r language.Ref) (Span, outcome, error) {
	st := stateOf(sc)
	if in.cache != nil {
		if err := catchUp(sc, in.cache); err != nil {
			return Span{}, outcome{}, err
		}
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: r.Name}}
	if r.Namespaced {
		req.Namespace = sc.Namespace
	}
	ctx, b := withBudget(sc.Context(), in)
	span := Span{Controller: in.Controller.Name, Actor: in.Actor, Object: r.String(), Request: req, From: sc.Recorder().LastSeq() + 1}
	out := callReconcile(ctx, in.reconciler, req)
	span.To = sc.Recorder().LastSeq()
	span.runaway = b.overrun()
	span.crashed = b.abort.Err()
	if span.crashed != nil {
		// What Reconcile returned once its calls failed is no answer: a
		// killed process returns nothing.
		out = outcome{crashed: span.crashed}
	}
	span.out = out
	st.mu.Lock()
	st.reconciles = append(st.reconciles, span)
	if span.crashed != nil {
		// A killed process keeps nothing: the next reconcile builds the
		// instance afresh, client, cache and all.
		delete(st.instances, in.Controller.Name+"/"+in.Actor)
	}
	st.mu.Unlock()
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

// RunningInstance returns c as actor runs it on its own in sc (start): an
// instance with cfg, the actor's config, and no client or reconciler, since
// c.Run builds its own clients.
func RunningInstance(sc *language.Scenario, c *Controller, actor string, cfg *rest.Config) *Instance {
	return &Instance{Controller: c, Actor: actor, Namespace: sc.Namespace, Config: cfg, sc: sc}
}
