package controllers

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/racekit/racekit/harness/language"
)

// state is what the controllers extension keeps for one scenario.
type state struct {
	// registry is every controller the scenario may use, by name.
	registry map[string]*Controller

	mu sync.Mutex
	// instances are the controllers as actors run them, by
	// "controller/actor".
	instances map[string]*Instance
	// reconciles are the spans of the trace each reconcile made.
	reconciles []Span
	// cacheTimeout bounds each wait for a cached controller's cache to
	// catch up; zero means DefaultCacheTimeout.
	cacheTimeout time.Duration
}

var stateKey = language.NewKey("controllers", func(*language.Scenario) *state {
	return &state{registry: map[string]*Controller{}, instances: map[string]*Instance{}}
})

// stateOf returns the controllers' state in sc.
func stateOf(sc *language.Scenario) *state { return stateKey.Of(sc) }

// Registry checks ctrls and returns them by name. It refuses a nil
// controller, one that cannot be used, and a name given twice.
func Registry(ctrls []*Controller) (map[string]*Controller, error) {
	out := map[string]*Controller{}
	for _, c := range ctrls {
		if c == nil {
			return nil, fmt.Errorf("a nil controller")
		}
		if err := c.check(); err != nil {
			return nil, err
		}
		if out[c.Name] != nil {
			return nil, fmt.Errorf("controller %s registered twice", c.Name)
		}
		out[c.Name] = c
	}
	return out, nil
}

// Extension returns the extension that races registry's controllers one
// reconcile at a time: reconcile, settle and result, and the referee's
// assertions, which judge each reconcile's span of the trace (crash, hold
// and release, which also act on a reconcile and a cache, are package
// running's). After each hook action, every cached controller's cache takes in
// the action's writes. err, Registry's error, fails every scenario as it
// starts.
func Extension(registry map[string]*Controller, err error) *language.Extension {
	var cmds []*language.Command
	cmds = append(cmds, controllerCommands...)
	cmds = append(cmds, refereeCommands...)
	return &language.Extension{
		Name:     "controllers",
		Commands: cmds,
		Setup: func(sc *language.Scenario, _ func(string, string)) error {
			if err != nil {
				return err
			}
			st := stateOf(sc)
			st.registry = registry
			for _, c := range registry {
				for _, s := range c.SideEffects {
					sc.AddService(s)
				}
			}
			return nil
		},
		AfterAction: catchUpAll,
	}
}

// Registered returns the controllers sc may use, sorted by name.
func Registered(sc *language.Scenario) []*Controller {
	st := stateOf(sc)
	var out []*Controller
	for _, c := range st.registry {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the controller called name, or a usage error that names
// those there are.
func Lookup(sc *language.Scenario, name string) (*Controller, error) { return controller(sc, name) }

// SetCacheTimeout bounds each wait for a cached controller's cache in sc,
// for racekit's own tests of a cache that never catches up.
func SetCacheTimeout(sc *language.Scenario, d time.Duration) {
	st := stateOf(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.cacheTimeout = d
}
