package harness

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// Controllers that run on their own: start runs a registered controller's
// long-running form (Controller.Run) in process, spawn runs any program as
// a process whose API calls come in through the racing proxy (spawn.go),
// and halt stops either. The names exec and stop, which would read more
// naturally, are testscript built-ins (exec runs a program, stop ends the
// script early as passed), and testscript runs its built-ins before any
// command a script engine adds.
func init() {
	register(&Command{
		Name: "start", Args: "CONTROLLER [as ACTOR]", Group: "run", MinArgs: 1, MaxArgs: 3,
		Summary: "run the registered controller on its own, as its main would (its informers, workqueue and workers; Controller.Run), as the controller actor or as ACTOR: every call it makes passes through the scenario's hooks and recorder, and a hook blocks the call that fired it until its action is done; " +
			"the scenario halts it at its end",
		Run: runStart,
	})
	register(&Command{
		Name: "halt", Args: "NAME [grace=DURATION]", Group: "run", MinArgs: 1, MaxArgs: 2,
		Summary: "stop what start or spawn started: a controller's context is cancelled and Run must return, a process gets SIGTERM, and SIGKILL when it has not exited after the grace period (default " + DefaultGrace.String() + "); " +
			"fails, naming it, when it does not stop in time or had already ended with an error; a process's output goes to stdout",
		Run: runHalt,
	})
}

// DefaultGrace bounds how long halt, and the end of a scenario, wait for a
// running controller to return or a process to exit before they call it
// stuck.
const DefaultGrace = 10 * time.Second

// runner is a controller running on its own in a scenario: started in
// process, or spawned as a process.
type runner struct {
	name, actor string
	// what says which: "controller" or "process", for messages.
	what string
	// stop asks it to stop: cancel its context, or send SIGTERM; kill,
	// for a process, sends SIGKILL.
	stop, kill func()
	// done is closed when it has returned or exited; err is then what
	// Run returned or how the process exited.
	done chan struct{}
	err  error
	// output is a process's output, the last of it (nil in process).
	output *tail
	// halted is set once halt, or the scenario's end, has stopped it.
	halted bool
}

// ended reports whether r has returned or exited, and how.
func (r *runner) ended() (bool, error) {
	select {
	case <-r.done:
		return true, r.err
	default:
		return false, nil
	}
}

// describe says how r ended, with a process's last lines of output.
func (r *runner) describe() string {
	var b strings.Builder
	if r.err != nil {
		fmt.Fprintf(&b, "%s %s ended on its own: %v", r.what, r.name, r.err)
	} else {
		fmt.Fprintf(&b, "%s %s ended on its own, without an error", r.what, r.name)
	}
	if r.output != nil {
		if out := strings.TrimSpace(r.output.String()); out != "" {
			fmt.Fprintf(&b, "; its last output:\n%s", lastLines(out, 15))
		}
	}
	return b.String()
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// running returns the runner called name.
func (sc *Scenario) running(name string) (*runner, error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if r, ok := sc.runners[name]; ok {
		return r, nil
	}
	var names []string
	for n := range sc.runners {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, usageErr("nothing called %s is running: start a controller with start, or a process with spawn, first", name)
	}
	return nil, usageErr("nothing called %s is running%s; running are %s", name, suggest(name, names), strings.Join(names, ", "))
}

// addRunner keeps r under its name, refusing a name already running.
func (sc *Scenario) addRunner(r *runner) error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if old, ok := sc.runners[r.name]; ok {
		if done, _ := old.ended(); !done || !old.halted {
			return usageErr("%s is already running; halt it first", r.name)
		}
	}
	if sc.runners == nil {
		sc.runners = map[string]*runner{}
	}
	sc.runners[r.name] = r
	return nil
}

// runnerOf returns the runner whose actor is actor, if one runs.
func (sc *Scenario) runnerOf(actor string) *runner {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, r := range sc.runners {
		if r.actor == actor {
			return r
		}
	}
	return nil
}

func runStart(sc *Scenario, inv Invocation) error {
	c, err := sc.controller(inv.Args[0])
	if err != nil {
		return err
	}
	actor, err := asActor(inv.Args[1:])
	if err != nil {
		return err
	}
	if c.Run == nil {
		return usageErr("controller %s has no running form: register it with racekit.Runner, or give it racekit.Runs or racekit.Manages, to start it; reconcile runs its reconciler once", c.Name)
	}
	if r := sc.runnerOf(actor); r != nil {
		return usageErr("%s already runs as %s; give this one another actor: start %s as %s-2", r.name, actor, c.Name, actor)
	}
	a, err := sc.Actor(actor)
	if err != nil {
		return err
	}
	in := &Instance{Controller: c, Actor: actor, Namespace: sc.Namespace, Config: rest.CopyConfig(a.Config), sc: sc}
	ctx, cancel := context.WithCancel(sc.ctx)
	r := &runner{name: c.Name, actor: actor, what: "controller", stop: cancel, kill: cancel, done: make(chan struct{})}
	if err := sc.addRunner(r); err != nil {
		cancel()
		return err
	}
	go func() {
		r.err = callRun(ctx, c, in)
		close(r.done)
		sc.rec.poke()
	}()
	return nil
}

// callRun calls Controller.Run, turning a panic into an error.
func callRun(ctx context.Context, c *Controller, in *Instance) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("Run panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return c.Run(ctx, in)
}

var haltOptions = []string{"grace"}

func runHalt(sc *Scenario, inv Invocation) error {
	r, err := sc.running(inv.Args[0])
	if err != nil {
		return err
	}
	opts, err := parseOptions(inv.Args[1:], haltOptions)
	if err != nil {
		return err
	}
	grace, err := durationOption(opts, "grace", DefaultGrace)
	if err != nil {
		return err
	}
	err = sc.halt(r, grace)
	if r.output != nil {
		fmt.Fprint(inv.Stdout, r.output.String())
	}
	return err
}

// halt stops r and waits for it, at most grace before it calls r stuck (a
// process is then killed). It fails when r does not stop, or had ended on
// its own with an error before it was asked to.
func (sc *Scenario) halt(r *runner, grace time.Duration) error {
	sc.mu.Lock()
	if r.halted {
		sc.mu.Unlock()
		return fmt.Errorf("%s %s was halted already", r.what, r.name)
	}
	r.halted = true
	sc.mu.Unlock()
	if done, err := r.ended(); done {
		if err != nil {
			return errors.New(r.describe())
		}
		return nil
	}
	r.stop()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-r.done:
		return nil
	case <-timer.C:
	}
	if r.what == "controller" {
		return fmt.Errorf("controller %s did not return within %v of its context's end: its Run must return when the context is done", r.name, grace)
	}
	r.kill()
	<-r.done // SIGKILL cannot be ignored; WaitDelay bounds the output's pipes
	return fmt.Errorf("process %s did not exit within %v of SIGTERM, and was killed with SIGKILL: a controller should stop when asked", r.name, grace)
}

// haltAll halts what still runs when the scenario ends, and returns what
// went wrong: a runner that would not stop, or that ended on its own with
// an error.
func (sc *Scenario) haltAll() []string {
	sc.mu.Lock()
	var rs []*runner
	for _, r := range sc.runners {
		if !r.halted {
			rs = append(rs, r)
		}
	}
	sc.mu.Unlock()
	sort.Slice(rs, func(i, j int) bool { return rs[i].name < rs[j].name })
	var msgs []string
	var wg sync.WaitGroup
	errs := make([]error, len(rs))
	for i, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = sc.halt(r, DefaultGrace)
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
// scenario's log.
func (sc *Scenario) outputs() []string {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var names []string
	for n, r := range sc.runners {
		if r.output != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		if s := strings.TrimSpace(sc.runners[n].output.String()); s != "" {
			out = append(out, fmt.Sprintf("output of %s:\n%s", n, s))
		}
	}
	return out
}

// durationOption reads the duration option key, or returns def.
func durationOption(opts map[string]string, key string, def time.Duration) (time.Duration, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, usageErr("bad %s=%s: want a positive duration such as 5s", key, v)
	}
	return d, nil
}

// RanOnItsOwn reports whether a controller or process ran on its own in
// the scenario (start, spawn). Its trace then depends on when watch events
// arrived (how many 409s a retry from a lagging cache met, which event
// woke which reconcile), so only its assertions, not its trace, are the
// same on every run.
func (sc *Scenario) RanOnItsOwn() bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return len(sc.runners) > 0
}
