package views

import (
	"context"
	"fmt"
	"sync"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
)

// Names returns the actor that what a layer above runs under name runs as
// now (package running's start and spawn: its last life's actor), and
// whether anything runs under name: hold NAME and release NAME act on that
// actor's view.
type Names func(sc *language.Scenario, name string) (actor string, ok bool)

var stateKey = language.NewKey("views", func(*language.Scenario) *views { return newViews() })

// viewsOf returns the views of sc.
func viewsOf(sc *language.Scenario) *views { return stateKey.Of(sc) }

// Extension returns the extension of what each actor is shown: hold,
// release and mark, at the wire of every actor's transport (Transport),
// and, at the scenario's end, a failure for each hold that failed or that
// nothing met. names says what runs under a name; nil when nothing does.
func Extension(names Names) *language.Extension {
	if names == nil {
		names = func(*language.Scenario, string) (string, bool) { return "", false }
	}
	return &language.Extension{
		Name:      "views",
		Commands:  commands(names),
		Transport: transport,
		End:       func(sc *language.Scenario) ([]string, []language.Failure) { return nil, viewFailures(sc) },
	}
}

// Held returns the resources whose watches a hold keeps back from actor:
// what it is not shown on purpose, which no wait for it to catch up waits
// for.
func Held(sc *language.Scenario, actor string) map[string]bool {
	v := viewsOf(sc)
	v.mu.Lock()
	defer v.mu.Unlock()
	out := map[string]bool{}
	for k := range v.holds {
		if k.actor == actor {
			out[k.resource] = true
		}
	}
	return out
}

// Step shows actor the oldest event of resource that its hold keeps back,
// on each of its held watch streams of resource, and waits until the
// actor has read it; the rest stay held. With upTo > 0 it first waits
// until each stream has brought an event of resourceVersion upTo or later
// (the last write the actor's watch will show, as the caller knows from
// the trace), and shows no event past upTo. It returns how many events it
// showed: 0 when nothing up to upTo is kept back. It fails when resource
// is not held for actor, and when ctx ends first. A catch-up of a stale
// view one event at a time steps, lets the actor settle, and steps again:
// every state in between is reconciled, in order, on every run.
func Step(ctx context.Context, sc *language.Scenario, actor, resource string, upTo uint64) (int, error) {
	resource, err := resourceOf(sc, resource)
	if err != nil {
		return 0, err
	}
	v := viewsOf(sc)
	key := viewKey{actor, resource}
	v.mu.Lock()
	if v.holds[key] == nil {
		v.mu.Unlock()
		return 0, fmt.Errorf("step %s %s without a hold: %s", actor, resource, v.heldKeys())
	}
	var gates []*gate
	for g := range v.gates[key] {
		gates = append(gates, g)
	}
	v.mu.Unlock()
	if upTo > 0 {
		for _, g := range gates {
			if err := g.reached(ctx, upTo); err != nil {
				return 0, fmt.Errorf("step %s %s: %w", actor, resource, err)
			}
		}
	}
	var shown []<-chan struct{}
	var note sync.Once
	for _, g := range gates {
		if c, ok := g.step(upTo, func() {
			note.Do(func() {
				sc.Recorder().NoteView(record.ViewChange{Change: record.ViewStep, Actor: actor, Resource: resource})
			})
		}); ok {
			shown = append(shown, c)
		}
	}
	for _, c := range shown {
		select {
		case <-c:
		case <-ctx.Done():
			return 0, fmt.Errorf("step %s %s: the actor did not read the event: %w", actor, resource, ctx.Err())
		}
	}
	return len(shown), nil
}

// Release ends actor's hold of resource (as a script names it) at the
// wire, as release ACTOR RESOURCE at pos would: what is still kept back is
// delivered, in order, and what follows passes. It fails when nothing is
// held, and when the hold met nothing or failed.
func Release(sc *language.Scenario, actor, resource, pos string) error {
	resource, err := resourceOf(sc, resource)
	if err != nil {
		return err
	}
	return releaseWire(sc, viewKey{actor, resource}, false, pos)
}
