package harness

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/rogpeppe/go-internal/testscript"
	"k8s.io/klog/v2"
)

type scenarioKey struct{}

// ScriptOptions configures Params.
type ScriptOptions struct {
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
	// WaitTimeout bounds await and idle unless a line says within=D;
	// zero means DefaultWait.
	WaitTimeout time.Duration
	// Controllers are the controllers scenarios may reconcile, by name.
	Controllers []*Controller
	// Commands are scenario commands beside the built-in ones: the
	// assertions of a controller's own domain. help and the language
	// reference show them (Commands).
	Commands []*Command
	// interferers are the lines of an explore run's script whose hooks
	// are the exploration's interferers: an interferer whose own action
	// fails (a NotFound on a first reconcile) is reported, but the run goes
	// on, so that the invariants judge it (explore.go).
	interferers []int
	// keepGoing, readServer and noise make the runs CheckNoise compares
	// (metamorphic.go): an assertion that fails does not stop the script;
	// every read of an object's state is a GET; the trace command leaves
	// out the calls of the noise the script was given.
	keepGoing  bool
	readServer bool
	noise      *noise
}

// Check reports a controller or command that cannot be used: a name given
// twice, a missing field. Params fails every scenario with it; check first
// to fail once.
func (o ScriptOptions) Check() error {
	_, _, err := o.registry()
	return err
}

// registry returns the controllers and every command, by name.
func (o ScriptOptions) registry() (map[string]*Controller, map[string]*Command, error) {
	ctrls := map[string]*Controller{}
	for _, c := range o.Controllers {
		if c == nil {
			return nil, nil, fmt.Errorf("a nil controller")
		}
		if err := c.check(); err != nil {
			return nil, nil, err
		}
		if ctrls[c.Name] != nil {
			return nil, nil, fmt.Errorf("controller %s registered twice", c.Name)
		}
		ctrls[c.Name] = c
	}
	cmds := make(map[string]*Command, len(commands)+len(o.Commands))
	for n, c := range commands {
		cmds[n] = c
	}
	for _, c := range o.Commands {
		if err := checkCommand(c, cmds); err != nil {
			return nil, nil, err
		}
		cmds[c.Name] = c
	}
	return ctrls, cmds, nil
}

// DefaultHookTimeout bounds a hook action that blocks: long enough for any
// honest action against a loaded API server, short enough that a stuck one
// fails its scenario well before go test's own timeout.
const DefaultHookTimeout = 30 * time.Second

// Params returns testscript parameters that run scenarios on cp: each script
// gets its own Scenario (namespace, actors, hooks, recorder), the scenario
// commands, and a final check that every armed hook fired.
func Params(ctx context.Context, cp *ControlPlane, opts ScriptOptions) testscript.Params {
	// The controller logs through the logger in its context. A scenario's
	// story is its trace; the controller's log lines would only interleave
	// with the output of racekit run and go test.
	ctx = klog.NewContext(ctx, logr.Discard())
	ctrls, all, regErr := opts.registry()
	cmds := map[string]func(ts *testscript.TestScript, neg bool, args []string){}
	for name, c := range all {
		cmds[name] = adapt(c)
	}
	return testscript.Params{
		Dir:                opts.Dir,
		Files:              opts.Files,
		UpdateScripts:      opts.UpdateScripts,
		RequireUniqueNames: true,
		Cmds:               cmds,
		Setup: func(env *testscript.Env) error {
			if regErr != nil {
				return regErr
			}
			name := scriptField(env, "name")
			sc, err := NewScenario(ctx, cp, name, env.WorkDir)
			if err != nil {
				return err
			}
			sc.controllers, sc.commands, sc.opts = ctrls, all, opts
			// A scenario with an explore line only explores: the lines
			// before it run in each of explore's runs, not here, so that
			// go test and racekit explore run the same lines.
			sc.exploring = hasExploreLine(scriptComment(env))
			sc.verifyReads = opts.VerifyReads
			sc.hooks.Timeout = opts.HookTimeout
			if sc.hooks.Timeout == 0 {
				sc.hooks.Timeout = DefaultHookTimeout
			}
			env.Values[scenarioKey{}] = sc
			env.Setenv("NAMESPACE", sc.Namespace)
			env.Setenv("KUBECONFIG", filepath.Join(env.WorkDir, SpawnedKubeconfig))
			t := env.T()
			sc.t = t
			env.Defer(func() {
				sc.Ended = time.Now()
				sc.stoppedOutside(env, t)
				defer sc.Close()
				halted := sc.haltAll()
				for _, out := range sc.outputs() {
					t.Log(out)
				}
				if s := strings.TrimSpace(sc.proxyLog.String()); s != "" {
					t.Log("the racing proxy said:\n" + s)
				}
				for _, f := range sc.endFailures(halted, t.Log) {
					fail(t, "FAIL: "+f.Text())
					sc.Failed = true
				}
				if f, ok := t.(interface{ Failed() bool }); ok && f.Failed() {
					sc.Failed = true
				}
				if opts.Done != nil {
					opts.Done(sc)
				}
			})
			return nil
		},
	}
}

// adapt turns a Command into a testscript command: it reports failures as
// "file:line: command args: what went wrong", and after every command it
// reports the failed actions of hooks that fired during it. Each
// assertion's verdict and each failure is kept as a value (Verdict,
// Failure).
func adapt(c *Command) func(ts *testscript.TestScript, neg bool, args []string) {
	return func(ts *testscript.TestScript, neg bool, args []string) {
		sc := ts.Value(scenarioKey{}).(*Scenario)
		sc.mu.Lock()
		exploring := sc.exploring
		sc.mu.Unlock()
		if exploring && c.Name != "explore" {
			return // each interleaving runs this line
		}
		pos := scriptPos(ts)
		err := safeCall(c, sc, Invocation{Neg: neg, Args: args, Stdout: ts.Stdout(), Pos: pos, Setenv: ts.Setenv, Defer: ts.Defer})
		file, line := splitPos(pos)
		command := strings.Join(append([]string{c.Name}, args...), " ")
		var fs []Failure
		if err != nil {
			f := Failure{Kind: FailCommand, File: file, Line: line, Command: command}
			var named *rulesError
			if errors.As(err, &named) {
				f.Findings, f.Rules = named.findings, named.lines
			}
			if crash := sc.cp.crashed(); crash != nil {
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
			fail(sc.t, fmt.Sprintf("FAIL: %s: %s%s", pos, msgs[0], goesOn))
			return
		}
		sc.mu.Lock()
		sc.stopped = true
		sc.mu.Unlock()
		ts.Fatalf("%s", strings.Join(msgs, "\n"))
	}
}

// goesOn reports whether the script goes on after c failed with err: in
// the runs CheckNoise compares, an assertion that does not hold is one
// verdict among the script's, unless the line itself is wrong (a usage
// error), which stops it as always.
func (sc *Scenario) goesOn(c *Command, err error) bool {
	return sc.opts.keepGoing && c.Group == "assert" && !errors.Is(err, errUsage) && sc.t != nil
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
	return c.call(sc, inv)
}

// fail marks t failed without stopping it, so that every message is shown.
func fail(t testscript.T, msg string) {
	if e, ok := t.(interface{ Error(...any) }); ok {
		e.Error(msg)
		return
	}
	t.Fatal(msg)
}

// scriptPos returns the script's current file:line. testscript keeps them
// unexported; they are read, never written, with reflect, so that a hook can
// name the line that armed it when it fails at the end of the script.
func scriptPos(ts *testscript.TestScript) string {
	v := reflect.ValueOf(ts).Elem()
	file, line := v.FieldByName("file"), v.FieldByName("lineno")
	if !file.IsValid() || !line.IsValid() {
		return ts.Name()
	}
	return fmt.Sprintf("%s:%d", file.String(), line.Int())
}

// scriptField reads a string field of the script an Env belongs to.
func scriptField(env *testscript.Env, field string) string {
	ts := reflect.ValueOf(env).Elem().FieldByName("ts")
	if !ts.IsValid() || ts.IsNil() {
		return "scenario"
	}
	f := ts.Elem().FieldByName(field)
	if !f.IsValid() {
		return "scenario"
	}
	return f.String()
}
