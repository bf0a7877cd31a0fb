package running

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/racekit/racekit/harness/controllers"
	"github.com/racekit/racekit/harness/language"
)

// Controllers that run on their own: start runs a registered controller's
// long-running form (Controller.Run) in process, spawn runs any program as
// a process whose API calls come in through the racing proxy (spawn.go),
// and halt stops either. The names exec and stop, which would read more
// naturally, are testscript built-ins (exec runs a program, stop ends the
// script early as passed), and testscript runs its built-ins before any
// command a script engine adds.
var runCommands = []*language.Command{
	{
		Name: "start", Args: "CONTROLLER [as ACTOR]", Group: "run", MinArgs: 1, MaxArgs: 3,
		Summary: "run the registered controller on its own, as its main would (informers, workqueue, workers), as the controller actor or ACTOR",
		Detail: "run the registered controller on its own, as its main would (its informers, workqueue and workers; Controller.Run), as the controller actor or as ACTOR: every call it makes passes through the scenario's hooks and recorder, and a hook blocks the call that fired it until its action is done; " +
			"its LISTs and WATCHes of a namespaced resource across every namespace are sent as ones of the scenario's namespace, so that it sees no other scenario's objects; " +
			"the scenario halts it at its end; once halted, it can be started again",
		Run: runStart,
	},
	{
		Name: "halt", Args: "NAME [grace=DURATION]", Group: "run", MinArgs: 1, MaxArgs: 2,
		Summary: "stop what start or spawn started: cancel a controller's context, or SIGTERM a process and SIGKILL it after the grace period",
		Detail: "stop what start or spawn started: a controller's context is cancelled and Run must return, a process's group gets SIGTERM, and SIGKILL when it has not exited after the grace period (default " + DefaultGrace.String() + "), and what else it started is killed once it has exited; " +
			"fails, naming it, when it does not stop in time or had already ended with an error; a process's output goes to stdout; a halted NAME can be started or spawned again; of a NAME a crash killed, halt only waits for a controller's Run to return",
		Run: runHalt,
	},
}

// DefaultGrace bounds how long halt, and the end of a scenario, wait for a
// running controller to return or a process to exit before they call it
// stuck.
const DefaultGrace = 10 * time.Second

func runStart(sc *language.Scenario, inv language.Invocation) error {
	c, err := controllers.Lookup(sc, inv.Args[0])
	if err != nil {
		return err
	}
	actor, err := language.AsActor(inv.Args[1:])
	if err != nil {
		return err
	}
	if c.Run == nil {
		return language.UsageError("controller %s has no running form: register it with racekit.Runner, or give it racekit.Runs or racekit.Manages, to start it; reconcile runs its reconciler once", c.Name)
	}
	if err := checkFree(sc, c.Name, actor, "start"); err != nil {
		return err
	}
	a, err := sc.Actor(actor)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(sc.Context())
	l := &life{name: c.Name, actor: actor, what: "controller", started: time.Now(), stop: cancel, kill: cancel, done: make(chan struct{}),
		again: startAgain(inv.Args)}
	cfg := confined(sc, a.Config)
	cfg.Wrap(l.crash.wrap)
	in := controllers.RunningInstance(sc, c, actor, cfg)
	addLife(sc, l)
	// Every goroutine the controller starts carries its life's label, by
	// which idle tells its goroutines from the rest of the process's.
	l.label = labelOf(sc, l)
	go runLabelled(ctx, l.label, func(ctx context.Context) {
		l.err = callRun(ctx, c, in)
		l.noteGone(sc)
		close(l.done)
		sc.Recorder().Poke()
	})
	return nil
}

// callRun calls Controller.Run, turning a panic into an error.
func callRun(ctx context.Context, c *controllers.Controller, in *controllers.Instance) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("Run panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return c.Run(ctx, in)
}

var haltOptions = []string{"grace"}

func runHalt(sc *language.Scenario, inv language.Invocation) error {
	r, err := running(sc, inv.Args[0])
	if err != nil {
		return err
	}
	opts, err := language.ParseOptions(inv.Args[1:], haltOptions)
	if err != nil {
		return err
	}
	grace, err := language.DurationOption(opts, "grace", DefaultGrace)
	if err != nil {
		return err
	}
	l := lastLife(sc, r)
	err = halt(sc, l, grace, inv.Pos)
	if l.output != nil {
		fmt.Fprint(inv.Stdout, l.output.String())
	}
	return err
}

// halt stops l and waits for it, at most grace before it calls l stuck (a
// process is then killed); at says where, for messages. It fails when l
// does not stop, or had ended on its own with an error before it was
// asked to.
func halt(sc *language.Scenario, l *life, grace time.Duration, at string) error {
	done, err := l.ended()
	l.mu.Lock()
	if l.halted != "" {
		l.mu.Unlock()
		return fmt.Errorf("%s %s was halted already, at %s", l.what, l.name, l.halted)
	}
	l.halted, l.ownEnd = at, done
	l.mu.Unlock()
	if l.crash.at() != "" {
		return awaitCrashed(l, grace)
	}
	if done {
		if err != nil {
			return errors.New(l.describe())
		}
		return nil
	}
	l.stop()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-l.done:
		return nil
	case <-timer.C:
	}
	if l.what == "controller" {
		return fmt.Errorf("controller %s did not return within %v of its context's end: its Run must return when the context is done", l.name, grace)
	}
	l.kill()
	<-l.done // SIGKILL cannot be ignored; WaitDelay bounds the output's pipes
	return fmt.Errorf("process %s did not exit within %v of SIGTERM, and was killed with SIGKILL: a controller should stop when asked", l.name, grace)
}

// haltAll halts what still runs when the scenario ends, and returns what
// went wrong: a life that would not stop, or that ended on its own with
// an error.
func haltAll(sc *language.Scenario) []string {
	st := stateOf(sc)
	st.mu.Lock()
	var ls []*life
	for _, r := range st.lifelines {
		if l := r.last(); l.haltedAt() == "" {
			ls = append(ls, l)
		}
	}
	st.mu.Unlock()
	sort.Slice(ls, func(i, j int) bool { return ls[i].name < ls[j].name })
	var msgs []string
	var wg sync.WaitGroup
	errs := make([]error, len(ls))
	for i, l := range ls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = halt(sc, l, DefaultGrace, "the end of the scenario")
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			msgs = append(msgs, "at the end of the scenario: "+err.Error())
		}
	}
	return msgs
}

// outputs returns the output of each process the scenario spawned, for the
// scenario's log: each life's, numbered when a name had more than one.
func outputs(sc *language.Scenario) []string {
	st := stateOf(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	var names []string
	for n := range st.lifelines {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		lives := st.lifelines[n].lives
		for _, l := range lives {
			if l.output == nil {
				continue
			}
			s := strings.TrimSpace(l.output.String())
			switch {
			case s == "":
			case len(lives) > 1:
				out = append(out, fmt.Sprintf("output of %s (life %d of %d):\n%s", n, l.n, len(lives), s))
			default:
				out = append(out, fmt.Sprintf("output of %s:\n%s", n, s))
			}
		}
	}
	return out
}

// RanOnItsOwn reports whether a controller or process ran on its own in
// the scenario (start, spawn). Its trace then depends on when watch events
// arrived (how many 409s a retry from a lagging cache met, which event
// woke which reconcile), so only its assertions, not its trace, are the
// same on every run.
func RanOnItsOwn(sc *language.Scenario) bool {
	st := stateOf(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.lifelines) > 0
}
