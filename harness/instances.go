package harness

import (
	"fmt"
	"net/http"
	"sync"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/racekit/racekit/controller"
	"github.com/racekit/racekit/controller/registry"
)

// instance is one reference controller of a scenario: a Reconciler that
// runs as an actor, with conflict counters of its own. Every instance of a
// scenario shares its registry, hooks and recorder, as two replicas of a
// deployed controller share a cluster and a registry.
type instance struct {
	r       *controller.Reconciler
	metrics *controller.Metrics
}

// Reconciler returns the reference controller that runs as actor
// (ControllerActor for the usual one), built on first use with zero-delay
// conflict retries and the production step count, and as the scenario's
// teaching variant, if it has one.
func (sc *Scenario) Reconciler(actor string) (*controller.Reconciler, error) {
	in, err := sc.instance(actor)
	if err != nil {
		return nil, err
	}
	return in.r, nil
}

// scheme is the controller's scheme, built once: it registers every
// built-in type, which costs each scenario about 2 ms of CPU, and a scheme
// is safe for concurrent use once built.
var scheme = sync.OnceValue(controller.NewScheme)

func (sc *Scenario) instance(actor string) (*instance, error) {
	a, err := sc.Actor(actor)
	if err != nil {
		return nil, err
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if in, ok := sc.instances[actor]; ok {
		return in, nil
	}
	// The guard sits outside the hooks and the recorder: a call it stops
	// is never sent, so it neither fires a hook nor shows in the trace.
	cfg := rest.CopyConfig(a.Config)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return &guard{next: next} })
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s http client: %w", actor, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme(), Mapper: sc.cp.mapper, HTTPClient: hc})
	if err != nil {
		return nil, fmt.Errorf("%s client: %w", actor, err)
	}
	reg := sc.httpClient(actor)
	reg.Transport = &guard{next: reg.Transport}
	opts := controller.Options{
		Backoff:  ZeroDelayRetry(),
		Registry: registry.NewClient(sc.registryURL, reg),
		Metrics:  controller.NewMetrics(),
	}
	in := &instance{r: controller.New(c, opts), metrics: opts.Metrics}
	if !sc.bug.IsZero() {
		in.r = controller.NewTeachingVariant(c, opts, sc.bug)
	}
	sc.instances[actor] = in
	return in, nil
}

// reconcileSpan is the part of the trace one reconcile made: the
// exchanges from seq from to seq to, of which actor's are the reconcile's
// own (a hook's writer may have called in between).
type reconcileSpan struct {
	actor    string
	name     string // the WebApp's
	from, to int
	// runaway is errRunaway, wrapped, when the guard stopped the
	// reconcile.
	runaway error
}

// lastSeq returns the sequence number of the last exchange recorded.
func (sc *Scenario) lastSeq() int {
	xs := sc.Trace().Exchanges()
	if len(xs) == 0 {
		return 0
	}
	return xs[len(xs)-1].Seq
}

// reconcile runs one reconcile of the WebApp name by rec, the controller
// that runs as actor, with a budget of calls, and returns its span of the
// trace and the error Reconcile returned.
func (sc *Scenario) reconcile(rec *controller.Reconciler, actor, name string) (reconcileSpan, error) {
	ctx, b := withBudget(sc.ctx)
	span := reconcileSpan{actor: actor, name: name, from: sc.lastSeq() + 1}
	err := rec.Reconcile(ctx, client.ObjectKey{Namespace: sc.Namespace, Name: name})
	span.to = sc.lastSeq()
	span.runaway = b.overrun()
	sc.mu.Lock()
	sc.reconciles = append(sc.reconciles, span)
	sc.mu.Unlock()
	return span, err
}
