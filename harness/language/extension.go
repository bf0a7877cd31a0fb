package language

import (
	"net/http"

	"github.com/racekit/racekit/harness/record"
)

// Extension is a layer above the language that plugs into every scenario:
// the commands it adds, what it does at the seams of a scenario's life,
// and how a run that judges the script (a check of the checks, an
// exploration) changes the script's course. The controllers, the
// controllers that run on their own, the API-semantics commands and
// explore are extensions; the language knows none of them. Every function
// may be nil.
type Extension struct {
	// Name names the extension in messages.
	Name string
	// Commands are the commands it adds.
	Commands []*Command
	// Setup runs when a scenario starts, before its first line; setenv
	// sets a script variable ($KEY).
	Setup func(sc *Scenario, setenv func(key, value string)) error
	// AfterAction runs after each hook action, before the call that fired
	// the hook goes on: a cached controller's cache takes in the action's
	// writes, so that what the controller reads next does not depend on
	// when an event lands.
	AfterAction func(sc *Scenario) error
	// Skip reports whether a line of the script must not run: a scenario
	// that explores runs its explore line alone, its other lines in each of
	// explore's runs.
	Skip func(sc *Scenario, c *Command) bool
	// Transport returns what to wrap around actor's calls to the API
	// server, on each side of the recorder: every actor's chain is
	// in-flight → hooks → outer → recorder → inner → the API server, for
	// the calls made in process, by a started controller, and through the
	// racing proxy alike. What outer changes in a request is what the
	// recorder records and the API server gets, after the hooks saw the
	// request as the actor made it; what inner keeps back of an answer the
	// recorder sees, and notes as shown to the actor, only once inner lets
	// it through. Either may be nil. It is called once per actor, when the
	// actor makes its first call, so what it returns must look up the
	// extension's state at each call.
	Transport func(sc *Scenario, actor string) (outer, inner func(http.RoundTripper) http.RoundTripper)
	// End runs when the script ends, passed or failed, before the
	// language's own end-of-script checks (hooks that failed or never
	// fired): it stops what still runs, and returns what to log and what
	// went wrong, as failures.
	End func(sc *Scenario) (logs []string, failures []Failure)

	// Tolerate is asked about each hook action that failed: it reports
	// whether the run goes on from the failure, and why, for the log. A
	// failure an extension tolerates is kept among the scenario's
	// failures, marked Tolerated, but is no verdict and fails nothing: an
	// interferer's own action that fails (a NotFound on a first reconcile)
	// changed nothing, and the invariants still judge the run.
	Tolerate func(sc *Scenario, f Failure) (why string, ok bool)
	// KeepGoing, when set, lets the script go on past an assertion that
	// does not hold: its failure is one verdict among the script's, for a
	// run whose every verdict counts. A line whose own arguments are wrong
	// (Usage) stops the script all the same.
	KeepGoing bool
	// ReadServer, when set, makes every read of an object's state a GET,
	// never the trace's last answer about it.
	ReadServer bool
	// ShowTrace returns what the trace command prints of the trace: a run
	// that adds calls of its own leaves them out, so that a golden trace
	// of the scenario does not see them.
	ShowTrace func(record.Trace) record.Trace
}

// Key is the key of one extension's state in a scenario: each extension
// keeps its own, instead of a field of Scenario.
type Key[T any] struct {
	name string
	init func(sc *Scenario) *T
}

// NewKey returns a key for state of type T, which init makes for a
// scenario the first time it is asked for.
func NewKey[T any](name string, init func(sc *Scenario) *T) *Key[T] {
	return &Key[T]{name: name, init: init}
}

// Of returns k's state in sc, made on first use.
func (k *Key[T]) Of(sc *Scenario) *T {
	sc.run.mu.Lock()
	v, ok := sc.run.state[k]
	sc.run.mu.Unlock()
	if ok {
		return v.(*T)
	}
	made := k.init(sc)
	sc.run.mu.Lock()
	defer sc.run.mu.Unlock()
	if v, ok := sc.run.state[k]; ok {
		return v.(*T)
	}
	sc.run.state[k] = made
	return made
}

// Peek returns k's state in sc, or nil when no one has asked for it yet.
func (k *Key[T]) Peek(sc *Scenario) *T {
	sc.run.mu.Lock()
	defer sc.run.mu.Unlock()
	if v, ok := sc.run.state[k]; ok {
		return v.(*T)
	}
	return nil
}
