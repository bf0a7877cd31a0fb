package language

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/rogpeppe/go-internal/testscript"
	"k8s.io/klog/v2"

	"github.com/racekit/racekit/harness/controlplane"
	"github.com/racekit/racekit/harness/referee"
)

type scenarioKey struct{}

// Options configures Params and RunFiles.
type Options struct {
	// Dir holds the *.txtar scenarios; Files, if set, names them instead.
	Dir   string
	Files []string
	// UpdateScripts rewrites golden sections (cmp stdout trace.golden)
	// with what the run produced.
	UpdateScripts bool
	// Done, if set, is called with each scenario when its script ends,
	// passed or failed, for reports and timelines.
	Done func(sc *Scenario)
	// HookTimeout bounds each hook action; zero means DefaultHookTimeout.
	HookTimeout time.Duration
	// VerifyReads makes every assertion that the trace answers (the
	// server's last answer about the object) check that answer against a
	// GET, and fail if they differ. It is for racekit's own tests.
	VerifyReads bool
	// WaitTimeout bounds the waits of commands that wait for what runs on
	// its own (await, idle, ended, and spawn's wait for a fixed port)
	// unless a line says within=D; zero means their default.
	WaitTimeout time.Duration
	// EndWaitsOnSettle ends a wait for what runs on its own (await) as
	// soon as everything that runs has settled, on idle's evidence,
	// without what it waits for, instead of at its bound: a failure
	// marked Settled. A settled controller may still act later (a
	// RequeueAfter, a poll of its own), so the option may fail a wait
	// that would have been met; it is for explore auto's shrinker, whose
	// candidates that leave out the cause of a wait would otherwise each
	// wait out the whole bound, and which only ever keeps a line when a
	// candidate fails.
	EndWaitsOnSettle bool
	// Extensions are the layers above the language that plug into every
	// scenario (Extension), in the order their seams run.
	Extensions []*Extension
	// Commands are scenario commands beside the built-in and the
	// extensions' ones: the assertions of a controller's own domain.
	Commands []*Command
}

// Check reports a command that cannot be used: a name given twice, a
// missing field. Params fails every scenario with it; check first to fail
// once.
func (o Options) Check() error {
	_, err := Table(o.Extensions, o.Commands)
	return err
}

// scratcher gives a folder that goes with the control plane
// (controlplane.ControlPlane.Scratch).
type scratcher interface {
	Scratch() (string, error)
}

// workdirRoot makes a folder for the work folders of one testscript run's
// scripts (testscript names each after its script alone, so each run needs
// a root of its own) inside the control plane's (Scratch), so that an
// interrupt or a kill leaves none behind: an exploration interrupted in
// the middle of its runs left them in TMPDIR. It fails when it cannot,
// as once the control plane's Stop has begun: testscript, given no root,
// makes its own in TMPDIR and removes it only when its scripts end, which
// an interrupt does not wait for (racekit run interrupted as it started
// the control plane left one behind).
func workdirRoot(cp scratcher) (string, error) {
	scratch, err := cp.Scratch()
	if err != nil {
		return "", fmt.Errorf("the scripts' work folder: %w", err)
	}
	root, err := os.MkdirTemp(scratch, "run-")
	if err != nil {
		return "", fmt.Errorf("the scripts' work folder: %w", err)
	}
	return root, nil
}

// DefaultHookTimeout bounds a hook action that blocks: long enough for any
// honest action against a loaded API server, short enough that a stuck one
// fails its scenario well before go test's own timeout.
const DefaultHookTimeout = 30 * time.Second

// Params returns testscript parameters that run scenarios on cp: each script
// gets its own Scenario (namespace, actors, hooks, recorder), the scenario
// commands, and a final check that every armed hook fired. It fails when
// it cannot make the scripts' work folder in the control plane's
// (workdirRoot), as once the control plane is stopping.
func Params(ctx context.Context, cp *controlplane.ControlPlane, opts Options) (testscript.Params, error) {
	root, err := workdirRoot(cp)
	if err != nil {
		return testscript.Params{}, err
	}
	// A controller logs through the logger in its context. A scenario's
	// story is its trace; the controller's log lines would only interleave
	// with the output of racekit run and go test.
	ctx = klog.NewContext(ctx, logr.Discard())
	all, tableErr := Table(opts.Extensions, opts.Commands)
	files := scriptNames(opts.Dir, opts.Files)
	cmds := map[string]func(ts *testscript.TestScript, neg bool, args []string){}
	for name, c := range all {
		cmds[name] = adapt(c)
	}
	return testscript.Params{
		WorkdirRoot:        root,
		Dir:                opts.Dir,
		Files:              opts.Files,
		UpdateScripts:      opts.UpdateScripts,
		RequireUniqueNames: true,
		Cmds:               cmds,
		Setup: func(env *testscript.Env) error {
			if tableErr != nil {
				return tableErr
			}
			name := workName(env.WorkDir)
			file, ok := files[name]
			if !ok {
				return fmt.Errorf("racekit cannot tell which file testscript runs in %s: it gave testscript %s", env.WorkDir, strings.Join(slices.Sorted(maps.Values(files)), ", "))
			}
			script, lines, err := readScript(file, func(name string) bool { return all[name] != nil })
			if err != nil {
				return err
			}
			sc, err := NewScenario(ctx, cp, name, env.WorkDir)
			if err != nil {
				return err
			}
			sc.run.opts, sc.run.cmds, sc.run.script, sc.run.lines = opts, all, script, lines
			sc.hooks.set.Timeout = opts.HookTimeout
			if sc.hooks.set.Timeout == 0 {
				sc.hooks.set.Timeout = DefaultHookTimeout
			}
			env.Values[scenarioKey{}] = sc
			env.Setenv("NAMESPACE", sc.Namespace)
			t := env.T()
			sc.run.t = t
			env.Defer(func() { sc.end(env, t) })
			for _, e := range opts.Extensions {
				if e.Setup == nil {
					continue
				}
				if err := e.Setup(sc, env.Setenv); err != nil {
					return err
				}
			}
			return nil
		},
	}, nil
}

// end is what happens when the script ends, passed or failed: the
// extensions stop what still runs and say what went wrong, then the hooks
// that failed or never fired fail the scenario.
func (sc *Scenario) end(env *testscript.Env, t testscript.T) {
	sc.run.mu.Lock()
	sc.run.ended = time.Now()
	sc.run.mu.Unlock()
	sc.stoppedOutside(t)
	defer sc.Close()
	var ended []Failure
	exts := sc.run.opts.Extensions
	for i := len(exts) - 1; i >= 0; i-- {
		if exts[i].End == nil {
			continue
		}
		logs, fs := exts[i].End(sc)
		for _, l := range logs {
			t.Log(l)
		}
		ended = append(ended, fs...)
	}
	failed := false
	for _, f := range sc.endFailures(ended, t.Log) {
		fail(t, "FAIL: "+f.Text())
		failed = true
	}
	if f, ok := t.(interface{ Failed() bool }); ok && f.Failed() {
		failed = true
	}
	sc.run.mu.Lock()
	sc.run.failed = failed
	sc.run.mu.Unlock()
	if sc.run.opts.Done != nil {
		sc.run.opts.Done(sc)
	}
}

// Script returns the scenario's script, without its archive files.
func (sc *Scenario) Script() string { return sc.run.script }

// adapt turns a Command into a testscript command: it reports failures as
// "file:line: command args: what went wrong", and after every command it
// reports the failed actions of hooks that fired during it. Each
// assertion's verdict and each failure is kept as a value (Verdict,
// Failure).
func adapt(c *Command) func(ts *testscript.TestScript, neg bool, args []string) {
	return func(ts *testscript.TestScript, neg bool, args []string) {
		sc := ts.Value(scenarioKey{}).(*Scenario)
		line := sc.run.lines.next(c.Name, neg, args, ts.Getenv)
		if line == 0 || ts.Name() != sc.Name {
			ts.Fatalf("racekit cannot tell which line of %s (%s, as testscript names it) runs %s: a bug of racekit's, or a testscript that reads scripts otherwise (TestScriptLines)", sc.run.lines.file, ts.Name(), strings.Join(append([]string{c.Name}, args...), " "))
		}
		pos := sc.run.lines.pos(line)
		for _, e := range sc.run.opts.Extensions {
			if e.Skip != nil && e.Skip(sc, c) {
				return
			}
		}
		err := safeCall(c, sc, Invocation{Neg: neg, Args: args, Stdout: ts.Stdout(), Pos: pos, Setenv: ts.Setenv, Defer: ts.Defer})
		var skip *Skip
		if errors.As(err, &skip) {
			sc.run.mu.Lock()
			sc.run.stopped = true
			sc.run.mu.Unlock()
			sc.run.t.Skip(fmt.Sprintf("%s: %s", pos, skip.Reason))
			return
		}
		file, line := SplitPos(pos)
		command := strings.Join(append([]string{c.Name}, args...), " ")
		var fs []Failure
		if err != nil {
			f := Failure{Kind: FailCommand, File: file, Line: line, Command: command, Usage: isUsage(err), Unavailable: errors.Is(err, ErrUnavailable), Settled: errors.Is(err, ErrSettled)}
			if m, ok := mismatchOf(err); ok {
				f.Claim, f.Want, f.Got = m.Claim, m.Want, m.Got
			}
			var named *referee.RulesError
			if errors.As(err, &named) {
				f.Findings, f.Rules = named.Findings(), named.Lines()
			}
			if crash := sc.cp.Crashed(); crash != nil {
				err = fmt.Errorf("%w\n(the command failed with: %v)", crash, err)
			}
			f.Message = err.Error()
			fs = append(fs, f)
		} else if c.Group == "assert" {
			sc.held(pos, command)
		}
		for _, f := range sc.hookErrors() {
			f.File, f.Line = file, line
			if !sc.tolerate(f, func(s string) { ts.Logf("%s", s) }) {
				fs = append(fs, f)
			}
		}
		if len(fs) == 0 {
			return
		}
		sc.record(fs...)
		msgs := make([]string, len(fs))
		for i, f := range fs {
			msgs[i] = f.Text()
		}
		if len(fs) == 1 && err != nil && sc.goesOn(c, err) {
			// A verdict among others: the script goes on to the next.
			fail(sc.run.t, fmt.Sprintf("FAIL: %s: %s%s", pos, msgs[0], goesOn))
			return
		}
		sc.run.mu.Lock()
		sc.run.stopped = true
		sc.run.mu.Unlock()
		ts.Fatalf("%s", strings.Join(msgs, "\n"))
	}
}

// goesOn reports whether the script goes on after c failed with err: when
// an extension keeps it going (Extension.KeepGoing), an assertion that does
// not hold is one verdict among the script's, unless the line itself is
// wrong (a usage error), which stops it as always.
func (sc *Scenario) goesOn(c *Command, err error) bool {
	keepGoing := slices.ContainsFunc(sc.run.opts.Extensions, func(e *Extension) bool { return e.KeepGoing })
	return keepGoing && c.Group == "assert" && !isUsage(err) && sc.run.t != nil
}

// AfterAction runs what each extension does after a hook's action, before
// the call that fired the hook goes on.
func (sc *Scenario) AfterAction() error {
	for _, e := range sc.run.opts.Extensions {
		if e.AfterAction == nil {
			continue
		}
		if err := e.AfterAction(sc); err != nil {
			return err
		}
	}
	return nil
}

// safeCall runs c, turning a panic into an error, so that a bug in a command
// fails its scenario instead of killing the process and, with it, the
// chance to stop the control plane.
func safeCall(c *Command, sc *Scenario, inv Invocation) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return c.Call(sc, inv)
}

// fail marks t failed without stopping it, so that every message is shown.
func fail(t testscript.T, msg string) {
	if e, ok := t.(interface{ Error(...any) }); ok {
		e.Error(msg)
		return
	}
	t.Fatal(msg)
}
