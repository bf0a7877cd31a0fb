package language

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/racekit/racekit/harness/controlplane"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/hooks"
	"github.com/racekit/racekit/internal/roundtrip"
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

// clients are a scenario's actors, who they are, and the harness's own
// client.
type clients struct {
	// admin is the harness's own client, unrecorded; own counts its calls.
	admin dynamic.Interface
	own   ownCalls
	// flight knows each actor's calls in flight, hooks and all, for idle.
	flight record.InFlight

	mu     sync.Mutex
	actors map[string]*Actor
	// identities are the actors declared with the actor command, who
	// authenticate as someone other than themselves in system:masters.
	identities map[string]identity
}

// identity is who a declared actor authenticates as, and whether it may
// impersonate others through the racing proxy.
type identity struct {
	user        string
	groups      []string
	impersonate bool
}

func newClients(cp *controlplane.ControlPlane) (*clients, error) {
	c := &clients{actors: map[string]*Actor{}, identities: map[string]identity{}}
	admin := cp.Admin()
	admin.Wrap(c.own.wrap)
	var err error
	if c.admin, err = dynamic.NewForConfig(admin); err != nil {
		return nil, fmt.Errorf("admin client: %w", err)
	}
	return c, nil
}

var actorName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}$`)

// ValidActor reports whether name is a valid actor name.
func ValidActor(name string) bool { return actorName.MatchString(name) }

// Actor returns the actor called name, creating it on first use.
func (sc *Scenario) Actor(name string) (*Actor, error) {
	c := sc.clients
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.actors[name]; ok {
		return a, nil
	}
	if !actorName.MatchString(name) {
		return nil, fmt.Errorf("bad actor name %q: want a lower-case name such as bob or controller", name)
	}
	var cfg *rest.Config
	var err error
	if id, ok := c.identities[name]; ok {
		cfg, err = sc.cp.DeclaredUser(id.user, id.groups)
	} else {
		cfg, err = sc.cp.User(name, "system:masters")
	}
	if err != nil {
		return nil, err
	}
	// The API server takes the field manager from the user agent up to
	// the first slash, so each actor manages its fields under its name.
	cfg.UserAgent = name + "/racekit"
	// The first wrap is the innermost: in-flight → hooks → the
	// extensions' outer wraps → recorder → their inner wraps → the API
	// server (Extension.Transport).
	var outers []func(http.RoundTripper) http.RoundTripper
	for _, e := range sc.run.opts.Extensions {
		if e.Transport == nil {
			continue
		}
		outer, inner := e.Transport(sc, name)
		if inner != nil {
			cfg.Wrap(inner)
		}
		if outer != nil {
			outers = append(outers, outer)
		}
	}
	cfg.Wrap(sc.rec.Wrap(name))
	for _, outer := range outers {
		cfg.Wrap(outer)
	}
	cfg.Wrap(hooks.Wrap(name, sc.hooks.set))
	cfg.Wrap(c.flight.Wrap(name))
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", name, err)
	}
	a := &Actor{Name: name, Config: cfg, Dynamic: dc}
	c.actors[name] = a
	return a, nil
}

// ServiceClient returns a plain HTTP client for service, outside the API
// server, whose calls, like the API calls, pass through the scenario's
// hooks and recorder as actor (a controller's HTTPClient).
func (sc *Scenario) ServiceClient(actor, service string) *http.Client {
	base := http.DefaultTransport.(*http.Transport).Clone()
	return &http.Client{Transport: sc.clients.flight.Wrap(actor)(hooks.WrapService(actor, sc.hooks.set)(sc.rec.WrapService(actor, service)(base)))}
}

// InFlight knows each actor's calls in flight, from the moment they enter
// its transport, hooks and all, until their answer has been read.
func (sc *Scenario) InFlight() *record.InFlight { return &sc.clients.flight }

// declare makes name authenticate as id from its first call on.
func (sc *Scenario) declare(name string, id identity) error {
	c := sc.clients
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, used := c.actors[name]; used {
		return fmt.Errorf("%s has already made calls as itself in system:masters; declare it before its first use", name)
	}
	if _, dup := c.identities[name]; dup {
		return fmt.Errorf("%s is already declared", name)
	}
	c.identities[name] = id
	return nil
}

// Declared reports whether name was declared with the actor command: RBAC,
// not system:masters, decides what it may do.
func (sc *Scenario) Declared(name string) bool {
	sc.clients.mu.Lock()
	defer sc.clients.mu.Unlock()
	_, ok := sc.clients.identities[name]
	return ok
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
	return roundtrip.Func(func(req *http.Request) (*http.Response, error) {
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

// OwnRoundTrips returns how many calls the harness itself made to the API
// server for the scenario, outside the trace (its namespace, the reads
// behind assertions), and their summed round-trip time.
func (sc *Scenario) OwnRoundTrips() (int, time.Duration) {
	sc.clients.own.mu.Lock()
	defer sc.clients.own.mu.Unlock()
	return sc.clients.own.n, sc.clients.own.d
}
