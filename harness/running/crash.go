package running

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/racekit/racekit/harness/controllers"
	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/hooks"
)

// Crashing what runs on its own, at a moment a hook chooses: a process
// and every process it started get SIGKILL, a controller started in process has its context
// cancelled, and from then on every call of that life fails. A call held
// at a before point is not sent; a call held at an after point loses its
// answer, which the trace still shows, since the API server gave it.
var crashCommands = []*language.Command{
	{
		Name: "crash", Args: "NAME|CONTROLLER [as ACTOR]", Group: "race", MinArgs: 1, MaxArgs: 3,
		Summary: "kill what start or spawn runs as NAME at this moment, as a hook's action or on a line of its own",
		Detail: "kill at this moment what start or spawn runs as NAME (a process and every process it started get SIGKILL, and crash waits for all of them to exit; a started controller's context is cancelled), as a hook's action or on a line of its own: " +
			"from then on that life's calls fail, the call that fired the hook is not sent (before) or loses its answer (after), and NAME can be started or spawned again; " +
			"as a hook's action on a call of a registered CONTROLLER's reconcile, kill that reconcile as a killed process would: its later calls fail, its instance (client, cache, memory) is thrown away, and it returns nothing (result CONTROLLER crashed: reconcile and ! reconcile fail on it, try reconcile goes on, settle starts a fresh instance); " +
			"with explore, with crash NAME tries every moment",
		Hookable: true, Run: runCrash,
	},
}

// errKilled is what the calls of a crashed life fail with, wrapped.
var errKilled = errors.New("killed")

func runCrash(sc *language.Scenario, inv language.Invocation) error {
	name := inv.Args[0]
	if inv.InHook && controllers.Reconciling(inv.Ctx, name) {
		return controllers.CrashReconcile(sc, inv)
	}
	r, ok := lifelineOf(sc, name)
	if !ok {
		if _, err := controllers.Lookup(sc, name); err == nil {
			return controllers.CrashReconcile(sc, inv)
		}
		return unknownName(sc, "crash", name)
	}
	l := lastLife(sc, r)
	if len(inv.Args) > 1 {
		actor, err := language.AsActor(inv.Args[1:])
		if err != nil {
			return err
		}
		if actor != l.actor {
			return language.UsageError("%s runs as %s, not as %s: crash %s kills it whatever its actor", name, l.actor, actor, name)
		}
	}
	if err := notRunning(l, "crash"); err != nil {
		return err
	}
	return crashLife(sc, l, inv.Pos)
}

// lifelineOf returns the lifeline called name, if start or spawn ran it.
func lifelineOf(sc *language.Scenario, name string) (*lifeline, bool) {
	st := stateOf(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	r, ok := st.lifelines[name]
	return r, ok
}

// unknownName is the error of how (crash, restart) about a name that
// start or spawn never ran, and that names no registered controller
// either: it lists the names there are.
func unknownName(sc *language.Scenario, how, name string) error {
	st := stateOf(sc)
	st.mu.Lock()
	var names []string
	for n := range st.lifelines {
		names = append(names, n)
	}
	st.mu.Unlock()
	sort.Strings(names)
	started := "nothing was started or spawned yet"
	if len(names) > 0 {
		started = "started or spawned were " + strings.Join(names, ", ")
	}
	var ctrls []string
	for _, c := range controllers.Registered(sc) {
		ctrls = append(ctrls, c.Name)
	}
	what, candidates := "what start or spawn runs", names
	switch {
	case how == "crash":
		what += ", or the reconcile of a registered controller"
		candidates = append(candidates, ctrls...)
		if len(ctrls) > 0 {
			started += "; registered controllers are " + strings.Join(ctrls, ", ")
		}
	case slices.Contains(ctrls, name):
		started += "; start " + name + " first"
	}
	return language.UsageError("nothing called %s was started or spawned in this scenario%s: %s kills %s; %s",
		name, language.Suggest(name, candidates), how, what, started)
}

// notRunning returns why how (crash, restart) cannot act on l, the newest
// life of its name, or nil when it runs.
func notRunning(l *life, how string) error {
	if at := l.crash.at(); at != "" {
		return language.UsageError("%s is not running: it was crashed at %s; %s acts on what runs: start or spawn it again first", l.name, at, how)
	}
	if at := l.haltedAt(); at != "" {
		return language.UsageError("%s is not running: it was halted at %s; %s acts on what runs: start or spawn it again first", l.name, at, how)
	}
	if done, _ := l.ended(); done {
		return language.UsageError("%s is not running: %s; halt it, which says how it ended, then start or spawn it again", l.name, l.describe())
	}
	return nil
}

// crashLife kills l at pos: its calls fail from now on, those in flight
// included, and then the process and every process it started get SIGKILL
// (crash waits, at most DefaultGrace, for all of them to exit) or its
// context is cancelled. A
// started controller is not waited for: the call that fired the hook may
// be one of its workers', which its Run would wait for; halt, or the end
// of the scenario, waits for its Run to return.
func crashLife(sc *language.Scenario, l *life, pos string) error {
	err := fmt.Errorf("%w: %s %s was crashed (crash, at %s)", errKilled, l.what, l.name, pos)
	if !l.crash.set(pos, err) {
		return language.UsageError("%s is not running: it was crashed at %s", l.name, l.crash.at())
	}
	l.noteGone(sc)
	l.kill()
	defer sc.Recorder().Poke()
	if l.what != "process" {
		return nil
	}
	timer := time.NewTimer(DefaultGrace)
	defer timer.Stop()
	select {
	case <-l.done:
		return nil
	case <-timer.C:
		return fmt.Errorf("process %s, with every process it started, did not exit within %v of SIGKILL", l.name, DefaultGrace)
	}
}

// awaitCrashed waits, at most grace, for a crashed life to be gone, for
// halt and the end of the scenario: a started controller's Run must
// return once its context is cancelled. How a crashed life ended is no
// failure: the crash ended it.
func awaitCrashed(l *life, grace time.Duration) error {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-l.done:
		return nil
	case <-timer.C:
	}
	if l.what == "controller" {
		return fmt.Errorf("controller %s did not return within %v of its crash, at %s, which cancelled its context: its Run must return when the context is done", l.name, grace, l.crash.at())
	}
	l.kill()
	<-l.done
	return nil
}

// crashState is whether a crash killed a life, where, and the life's calls
// in flight, each with the Abort that fails it at its next step.
type crashState struct {
	mu     sync.Mutex
	where  string
	err    error
	flying map[*hooks.Abort]int
	// again is set while restart starts the name anew after this crash:
	// an await waits for the new life rather than fail on this one.
	again bool
}

// restarting reports whether restart is starting the life's name anew.
func (c *crashState) restarting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.again
}

// setRestarting notes that restart starts the name anew, or is done.
func (c *crashState) setRestarting(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.again = on
}

// at returns where the crash was, or "" while none was.
func (c *crashState) at() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.where
}

// failed returns what the life's calls fail with since the crash, or nil.
func (c *crashState) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// set notes the crash at where and aborts every call in flight with err;
// it reports false when the life had crashed already.
func (c *crashState) set(where string, err error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.where != "" {
		return false
	}
	c.where, c.err = where, err
	for a := range c.flying {
		a.Set(err)
	}
	return true
}

// enter notes a call that enters the life's transport with a, or returns
// the crash's error, when there was one: the call is not sent.
func (c *crashState) enter(a *hooks.Abort) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	if c.flying == nil {
		c.flying = map[*hooks.Abort]int{}
	}
	c.flying[a]++
	return nil
}

// leave notes that a call entered with a has its answer, or failed.
func (c *crashState) leave(a *hooks.Abort) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.flying[a]--; c.flying[a] <= 0 {
		delete(c.flying, a)
	}
}

// wrap is for the rest.Config of a controller started in process: the
// outermost wrapper of its transport, so that its calls fail once it has
// crashed.
func (c *crashState) wrap(next http.RoundTripper) http.RoundTripper {
	return &crashCheck{next: next, life: func() *crashState { return c }}
}

// livesOf returns actor's transport in the racing proxy, next, behind the
// check of the life its calls belong to: the newest that runs, or ran, as
// actor. A crashed process is dead, so a call of its that comes in after
// the crash was written before it (a real API server would have read it),
// or comes from another client with the actor's kubeconfig.
func livesOf(sc *language.Scenario, actor string, next http.RoundTripper) http.RoundTripper {
	return &crashCheck{next: next, life: func() *crashState {
		if l := lifeOf(sc, actor); l != nil {
			return &l.crash
		}
		return nil
	}}
}

// crashCheck fails the calls of a crashed life. It sits outside the
// hooks: it gives each call an Abort (hooks.WithAbort), which the hooks'
// transport checks before it sends the call and after the after-hooks, so
// a crash in a hook's action fails the call that fired it, and every
// other call of the life in flight, at its next step; and it drops an
// answer that arrives after the crash.
type crashCheck struct {
	next http.RoundTripper
	life func() *crashState
}

func (t *crashCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	c := t.life()
	if c == nil {
		return t.next.RoundTrip(req)
	}
	a := hooks.AbortOf(req.Context())
	if a == nil {
		var ctx context.Context
		ctx, a = hooks.WithAbort(req.Context())
		req = req.WithContext(ctx)
	}
	if err := c.enter(a); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	resp, err := t.next.RoundTrip(req)
	c.leave(a)
	if cerr := c.failed(); cerr != nil {
		if err == nil {
			resp.Body.Close()
		}
		return nil, cerr
	}
	return resp, err
}
