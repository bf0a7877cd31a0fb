package running

import (
	"context"
	"fmt"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/harness/views"
)

// catchUpCommands end a stale view slowly: a lagging API server that
// catches up one event at a time, with the controller settled after each,
// so that it reconciles every state in between, in order, on every run.
// release delivers what a hold kept back all at once, and which of those
// states a controller's reconcile reads is then a race between its
// informer and its worker that no hook orders.
var catchUpCommands = []*language.Command{{
	Name: "catch-up", Args: "NAME RESOURCE [within=DURATION]", Group: "run", MinArgs: 2, MaxArgs: 3,
	Summary: "end the hold of NAME's RESOURCE one event at a time, NAME settled (idle) after each, then release it",
	Detail: "end the hold of NAME's view of RESOURCE at the wire one event at a time: show NAME the oldest event the hold keeps back, wait until NAME has read it and then until it is idle (on the evidence idle takes), and again, up to the last write to RESOURCE in NAME's watch's scope that the trace held when catch-up began (none, if nothing was written since the watch's resourceVersion); then release the hold, which delivers what NAME's own writes added meanwhile and lets what follows pass. " +
		"Every state in between is reconciled, in order, on every run, where release delivers them at once and which state a reconcile reads is a race of the controller's own (its informer against its worker); the trace shows each event shown and each settling. " +
		"Fails when RESOURCE is not held for NAME, when a wait fails (after DURATION, default " + DefaultWait.String() + ", for each), and as release fails",
	Run: runCatchUp,
}}

func runCatchUp(sc *language.Scenario, inv language.Invocation) error {
	name, resource := inv.Args[0], inv.Args[1]
	r, err := running(sc, name)
	if err != nil {
		return err
	}
	o, err := language.ParseOptions(inv.Args[2:], []string{"within"})
	if err != nil {
		return err
	}
	within, err := language.DurationOption(o, "within", waitTimeout(sc))
	if err != nil {
		return err
	}
	gvr, _, err := sc.ControlPlane().Resource(resource)
	if err != nil {
		return language.UsageError("catch-up %s %s: %v", name, resource, err)
	}
	actor := lastLife(sc, r).actor
	if !views.Held(sc, actor)[gvr.Resource] {
		return fmt.Errorf("catch-up %s %s: %s's view of %s is not held (hold it, or restart %s stale %s at=MARK, first)", name, resource, name, gvr.Resource, name, resource)
	}
	upTo := lastWrite(sc, actor, gvr.Resource)
	for i := 1; upTo > 0; i++ {
		ctx, cancel := context.WithTimeout(sc.Context(), within)
		shown, err := views.Step(ctx, sc, actor, gvr.Resource, upTo)
		cancel()
		if err != nil {
			return fmt.Errorf("catch-up %s %s, event %d: %w", name, resource, i, err)
		}
		if shown == 0 {
			break
		}
		if err := waitIdle(sc, r, &settling{sc: sc, ignore: map[string]bool{}}, within); err != nil {
			return fmt.Errorf("catch-up %s %s, after event %d: %w", name, resource, i, err)
		}
	}
	return views.Release(sc, actor, gvr.Resource, inv.Pos)
}

// lastWrite returns the etcd revision of the last write to resource that
// actor's open watch of it will show (in its namespace, of its name, if it
// has either), as the trace holds it now: how far a catch-up steps; what
// the actor's own writes add meanwhile comes with the release. 0 when
// there is none since the watch's resourceVersion (nothing to step), or
// no watch is open.
func lastWrite(sc *language.Scenario, actor, resource string) uint64 {
	var watch *record.Exchange
	var writes []*record.Exchange
	sc.Recorder().Scan(func(x *record.Exchange) {
		switch {
		case x.Foreign:
		case record.WriteVerbs[x.Verb] || x.Verb == "deletecollection":
			if x.Resource == resource && x.Code >= 200 && x.Code < 300 {
				c := *x
				writes = append(writes, &c)
			}
		case x.Verb == "watch" && x.Actor == actor && x.Resource == resource && x.Code == 200 && !x.WatchEnded:
			c := *x
			watch = &c
		}
	})
	if watch == nil {
		return 0
	}
	// A watch starts after its resourceVersion: what was written before
	// it, its list showed.
	last, _ := revision(watch.SentRV)
	start := last
	for _, x := range writes {
		if watch.Namespace != "" && x.Namespace != watch.Namespace || watch.Name != "" && x.Name != watch.Name {
			continue
		}
		if rev, ok := revision(x.GotRV); ok && rev > last {
			last = rev
		}
	}
	if last == start {
		return 0
	}
	return last
}
