package controllers

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
)

// The cache half of hold and release, whose commands are package views':
// a registered cached controller's hold keeps a resource's watch events
// back from the cache racekit feeds it (cache.go, feed.go), not at the
// wire.

// heldResource reads CONTROLLER RESOURCE [as ACTOR] for hold and release,
// and returns the instance's cache and the resource's plural name.
func heldResource(sc *language.Scenario, args []string) (*controllerCache, string, error) {
	c, err := controller(sc, args[0])
	if err != nil {
		return nil, "", err
	}
	if len(c.Cache) == 0 {
		running := ""
		if c.Run != nil {
			running = fmt.Sprintf("; to hold what it is shown when it runs on its own, hold it by name once started (hold %s %s), or hold the actor it runs as", c.Name, args[1])
		}
		return nil, "", language.UsageError("controller %s is not cached: its reads go to the API server, so there is no watch to hold (register it with Cache)%s", c.Name, running)
	}
	gvr, _, err := sc.ControlPlane().Resource(args[1])
	if err != nil {
		return nil, "", language.UsageError("%v", err)
	}
	actor, err := language.AsActor(args[2:])
	if err != nil {
		return nil, "", err
	}
	in, err := instance(sc, c, actor)
	if err != nil {
		return nil, "", err
	}
	if !in.cache.caches(gvr.Resource) {
		var kinds []string
		for _, k := range in.cache.kinds {
			kinds = append(kinds, k.gvr.Resource)
		}
		return nil, "", language.UsageError("controller %s does not cache %s; it caches %s", c.Name, gvr.Resource, strings.Join(kinds, ", "))
	}
	return in.cache, gvr.Resource, nil
}

// HoldCache is hold CONTROLLER RESOURCE [as ACTOR], args, for a cached
// controller: the watch events of RESOURCE stop reaching the cache of the
// instance that runs as ACTOR (started if it has not reconciled yet),
// once the cache holds every write before the hold. The trace shows the
// hold where it happened.
func HoldCache(sc *language.Scenario, args []string) error {
	cc, resource, err := heldResource(sc, args)
	if err != nil {
		return err
	}
	// hold keeps back what is written after it, not what was written
	// before: without the wait, a write just before it would be in the
	// cache or not, as its watch event came before the hold or after.
	if err := catchUp(sc, cc); err != nil {
		return err
	}
	if err := cc.feed.hold(resource); err != nil {
		return err
	}
	sc.Recorder().NoteView(record.ViewChange{Change: record.ViewHold, Actor: cc.actor, Resource: resource, Cache: args[0]})
	return nil
}

// ReleaseCache is release CONTROLLER RESOURCE [as ACTOR], args: the
// events HoldCache kept back reach the cache, in order, and those that
// follow; the next reconcile waits until the cache has them.
func ReleaseCache(sc *language.Scenario, args []string) error {
	cc, resource, err := heldResource(sc, args)
	if err != nil {
		return err
	}
	if err := cc.feed.release(resource); errors.Is(err, errNotHeld) {
		return fmt.Errorf("release %s %s without a hold: nothing is held", args[0], resource)
	} else if err != nil {
		return err
	}
	sc.Recorder().NoteView(record.ViewChange{Change: record.ViewRelease, Actor: cc.actor, Resource: resource, Cache: args[0]})
	return nil
}

// CachedBy returns the cached controller whose cache actor reads resource
// through, if one has reconciled as actor: its informers are racekit's,
// and HoldCache holds them, so that a reconcile waits for nothing a hold
// keeps back.
func CachedBy(sc *language.Scenario, actor, resource string) (string, bool) {
	st := stateOf(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	var names []string
	for _, in := range st.instances {
		if in.Actor == actor && in.cache != nil && in.cache.caches(resource) {
			names = append(names, in.Controller.Name)
		}
	}
	if len(names) == 0 {
		return "", false
	}
	sort.Strings(names)
	return names[0], true
}
