package controllers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/racekit/racekit/harness/language"
)

// The commands that drive registered controllers (controllers.go): one
// reconcile, reconciles until a workqueue would stop, what the last one
// returned, and a crash. Holding a cached controller's watch events back
// is a form of hold and release, which package views owns (hold.go:
// HoldCache, ReleaseCache).
var controllerCommands = []*language.Command{
	{
		Name: "reconcile", Args: "[CONTROLLER] RESOURCE/NAME [as ACTOR]", Group: "race", MinArgs: 1, MaxArgs: 4,
		Summary: "run one reconcile of the object by the registered controller, as the controller actor or as ACTOR",
		Detail: "run one reconcile of the object by the registered controller (CONTROLLER may be left out when one controller reconciles RESOURCE), as the controller actor or as ACTOR: another instance, as a second replica would be; " +
			"a cached controller's cache first takes in every write so far; \"!\" expects Reconcile to return an error, which goes to stdout; a reconcile that a crash killed returned neither, and fails both (try reconcile goes on after it); a reconcile that makes more than " + strconv.Itoa(runawayCalls) + " calls of one kind is stopped as an unbounded retry",
		Negation: language.NegSelf, Hookable: true, Run: runReconcile,
	},
	{
		Name: "settle", Args: "[CONTROLLER] RESOURCE/NAME [max=N] [as ACTOR]", Group: "race", MinArgs: 1, MaxArgs: 5,
		Summary: "reconcile the object again while Reconcile returns an error or asks to be requeued, at most N times (default 10)",
		Detail:  "reconcile the object again while Reconcile returns an error or asks to be requeued, as a workqueue would but without its delays, at most N times (default " + strconv.Itoa(defaultSettle) + "); fails, naming the loop, when it never settles; every attempt is in the trace",
		Run:     runSettle,
	},
	{
		Name: "result", Args: "CONTROLLER done|requeue|requeue-after=DURATION|error|crashed [as ACTOR]", Group: "assert", MinArgs: 2, MaxArgs: 4,
		Summary: "assert what the controller's last reconcile returned: done, requeue, requeue-after=DURATION, error or crashed",
		Detail:  "assert what the controller's last reconcile returned: done (an empty Result, no error), requeue, requeue-after=DURATION (RequeueAfter, such as 30s), error, or crashed (a crash killed it, and it returned nothing)",
		Run:     runResult,
	},
}

// defaultSettle bounds settle's reconciles without max=N.
const defaultSettle = 10

func runReconcile(sc *language.Scenario, inv language.Invocation) error {
	c, r, rest, err := target(sc, inv.Args)
	if err != nil {
		return err
	}
	actor, err := language.AsActor(rest)
	if err != nil {
		return err
	}
	in, err := instance(sc, c, actor)
	if err != nil {
		return err
	}
	span, out, err := reconcileOnce(sc, in, r)
	if err != nil {
		return err
	}
	if span.runaway != nil {
		return fmt.Errorf("%v\n%s", span.runaway, sc.Trace().Tail(12))
	}
	if span.crashed != nil {
		return crashedReconcile(sc, inv.Neg, span)
	}
	switch {
	case inv.Neg && out.err == nil:
		broken := brokenRules(sc, span)
		return broken.Wrap(fmt.Errorf("reconcile succeeded (%s), but \"!\" expects an error%s\n%s", out, broken, sc.Trace().Tail(20)))
	case inv.Neg:
		fmt.Fprintf(inv.Stdout, "reconcile error: %v\n", out.err)
		return nil
	case out.err != nil:
		broken := brokenRules(sc, span)
		return broken.Wrap(fmt.Errorf("%w%s\n%s", out.err, broken, sc.Trace().Tail(20)))
	}
	return nil
}

// crashedReconcile is what reconcile and ! reconcile say of a reconcile
// that a crash killed: a killed process returns nothing, so neither "it
// succeeded" nor "it returned an error" holds, and each fails, saying so
// and what to write instead.
func crashedReconcile(sc *language.Scenario, neg bool, span Span) error {
	claim := "reconcile expects it to succeed"
	if neg {
		claim = "\"!\" expects it to return an error"
	}
	as := ""
	if span.Actor != language.ControllerActor {
		as = " as " + span.Actor
	}
	return &crashedError{crash: span.crashed, msg: fmt.Sprintf("%v, so it returned nothing, and %s: to go on after a crash, write try reconcile %s %s%s and then result %s crashed%s, or settle, which starts a fresh instance as a restarted process would\n%s",
		span.crashed, claim, span.Controller, span.Object, as, span.Controller, as, sc.Trace().Tail(20))}
}

// crashedError is a reconcile's failure because a crash killed it: try
// says only that, since it goes on after a crash as the message asks.
type crashedError struct {
	crash error // errCrashed, wrapped
	msg   string
}

func (e *crashedError) Error() string { return e.msg }
func (e *crashedError) Unwrap() error { return e.crash }

// Tried is what try prints after the command's name: the crash, not that
// the reconcile failed.
func (e *crashedError) Tried() string { return e.crash.Error() }

func runSettle(sc *language.Scenario, inv language.Invocation) error {
	c, r, rest, err := target(sc, inv.Args)
	if err != nil {
		return err
	}
	max := defaultSettle
	if len(rest) > 0 && strings.HasPrefix(rest[0], "max=") {
		n, err := strconv.Atoi(strings.TrimPrefix(rest[0], "max="))
		if err != nil || n < 1 {
			return language.UsageError("bad %q: want max=N with N at least 1", rest[0])
		}
		max, rest = n, rest[1:]
	}
	actor, err := language.AsActor(rest)
	if err != nil {
		return err
	}
	in, err := instance(sc, c, actor)
	if err != nil {
		return err
	}
	var outs []string
	var span Span
	for range max {
		var out outcome
		if span, out, err = reconcileOnce(sc, in, r); err != nil {
			return err
		}
		if span.runaway != nil {
			return fmt.Errorf("%v\n%s", span.runaway, sc.Trace().Tail(12))
		}
		if span.crashed != nil {
			// As a restarted process would, a fresh instance takes the
			// object up again.
			outs = append(outs, "crashed")
			if in, err = instance(sc, c, actor); err != nil {
				return err
			}
			continue
		}
		if !out.again() {
			return nil
		}
		outs = append(outs, out.String())
	}
	broken := brokenRules(sc, span)
	return broken.Wrap(fmt.Errorf("%s did not settle %s in %d reconciles: each asked to run again (%s)%s\n%s",
		c.Name, r, max, loopOf(outs), broken, sc.Trace().Tail(20)))
}

// loopOf renders what the reconciles of a loop returned, the same answers
// in a row once with a count.
func loopOf(outs []string) string {
	var parts []string
	for i := 0; i < len(outs); {
		j := i
		for j < len(outs) && outs[j] == outs[i] {
			j++
		}
		if n := j - i; n > 1 {
			parts = append(parts, fmt.Sprintf("%d× %s", n, outs[i]))
		} else {
			parts = append(parts, outs[i])
		}
		i = j
	}
	return strings.Join(parts, ", then ")
}

func runResult(sc *language.Scenario, inv language.Invocation) error {
	c, err := controller(sc, inv.Args[0])
	if err != nil {
		return err
	}
	want := inv.Args[1]
	switch {
	case want == "done" || want == "requeue" || want == "error" || want == "crashed":
	case strings.HasPrefix(want, "requeue-after="):
		d, err := time.ParseDuration(strings.TrimPrefix(want, "requeue-after="))
		if err != nil || d <= 0 {
			return language.UsageError("bad %q: want requeue-after=DURATION, such as requeue-after=30s", want)
		}
		want = "requeue-after=" + d.String()
	default:
		return language.UsageError("bad result %q: want done, requeue, requeue-after=DURATION, error or crashed", want)
	}
	actor, err := language.AsActor(inv.Args[2:])
	if err != nil {
		return err
	}
	last, ok := lastOutcome(sc, c.Name, actor)
	if !ok {
		return fmt.Errorf("%s has not reconciled anything as %s yet", c.Name, actor)
	}
	got := last.String()
	switch {
	case want == "error" && last.err != nil, got == want:
		return nil
	case last.crashed != nil:
		return fmt.Errorf("%s's last reconcile as %s returned nothing: %v; want %s\n%s", c.Name, actor, last.crashed, want, sc.Trace().Tail(20))
	}
	return fmt.Errorf("%s's last reconcile as %s returned %s, want %s\n%s", c.Name, actor, got, want, sc.Trace().Tail(20))
}

// lastOutcome returns what the last reconcile by controller as actor
// returned, if there was one.
func lastOutcome(sc *language.Scenario, controller, actor string) (outcome, bool) {
	st := stateOf(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	for i := len(st.reconciles) - 1; i >= 0; i-- {
		if s := st.reconciles[i]; s.Controller == controller && s.Actor == actor {
			return s.out, true
		}
	}
	return outcome{}, false
}

// errCrashed is what a crashed reconcile's calls fail with, wrapped.
var errCrashed = errors.New("crashed")

// Reconciling reports whether ctx, the context of the call that fired a
// hook, belongs to a reconcile of the controller called name: what crash
// kills then is that reconcile (CrashReconcile).
func Reconciling(ctx context.Context, name string) bool {
	b := budgetOf(ctx)
	return b != nil && b.in.Controller.Name == name
}

// CrashReconcile is crash CONTROLLER [as ACTOR] for a registered
// controller's reconcile, as a hook's action: the reconcile that made the
// call which fired the hook is killed at that moment (its calls fail from
// then on, and its instance is thrown away). The crash command itself is
// package running's, which also crashes what start and spawn run, and
// calls this for a reconcile.
func CrashReconcile(sc *language.Scenario, inv language.Invocation) error {
	c, err := controller(sc, inv.Args[0])
	if err != nil {
		return err
	}
	actor, err := language.AsActor(inv.Args[1:])
	if err != nil {
		return err
	}
	b := budgetOf(inv.Ctx)
	switch {
	case !inv.InHook:
		return language.UsageError("crash runs as a hook's action, at a moment of the controller's reconcile: on after ACTOR VERB RESOURCE/NAME: crash %s", c.Name)
	case b == nil:
		return fmt.Errorf("the call that fired the hook belongs to no reconcile of %s", c.Name)
	case b.in.Controller != c || b.in.Actor != actor:
		return fmt.Errorf("the call that fired the hook is %s's, as %s, not %s's as %s", b.in.Controller.Name, b.in.Actor, c.Name, actor)
	}
	b.abort.Set(fmt.Errorf("%w: %s as %s was killed in the middle of its reconcile (crash, armed at %s)", errCrashed, c.Name, actor, inv.Pos))
	return nil
}
