package views

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/racekit/racekit/harness/controllers"
	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
)

// commands are the commands that change what an actor is shown: hold and
// release its watch events, at the wire (views.go) or, for a cached
// controller, in the cache racekit feeds it (controllers.HoldCache); and
// mark, which names the present for a later hold at=. names says what runs
// under a name.
func commands(names Names) []*language.Command {
	return []*language.Command{{
		Name: "hold", Args: "ACTOR RESOURCE [at=RV|MARK|SNAPSHOT] | CONTROLLER RESOURCE [as ACTOR]", Group: "race", MinArgs: 2, MaxArgs: 4,
		Summary: "keep the watch events of RESOURCE back from ACTOR, in order, until release, or show it the store as of at=",
		Detail: "keep the watch events of RESOURCE back from ACTOR, in order, until release: every watch stream of it the actor has open or opens while held, in the actor's transport (in process, a started controller, or a spawned process through the racing proxy), whatever its encoding; events the actor has not read yet are held too, and a watch-list's initial events (the state it starts from) pass; " +
			"the hold is the scenario's, so it holds across the actor's lives (halt, then start or spawn again); NAME, a name start or spawn ran, holds the actor it runs as; " +
			"at= also sends the actor's next list of RESOURCE (the one its informer makes when it starts or relists) as of that resourceVersion, a mark's or a snapshot's: resourceVersion=RV&resourceVersionMatch=Exact, which the API server answers from its history (an informer's watch-list, which cannot start in the past, is sent so too, refused, and the informer lists); its watch then starts from there, held; the scenario fails, naming this line, when that list fails (410 Expired: compacted; an await of the actor fails at once), and when nothing ever meets the hold; " +
			"for a registered cached controller, hold CONTROLLER RESOURCE [as ACTOR] keeps the events from the cache racekit feeds it instead, once the cache holds every write before the hold (its informers start if it has not reconciled yet), and the controller reads what it had; the trace shows each hold where it happened",
		Hookable: true, Run: func(sc *language.Scenario, inv language.Invocation) error { return runHold(sc, inv, names) },
	}, {
		Name: "release", Args: "ACTOR RESOURCE [relist] | CONTROLLER RESOURCE [as ACTOR]", Group: "race", MinArgs: 2, MaxArgs: 4,
		Summary: "deliver the watch events hold kept back, in order, or end each held watch with 410 Expired (relist)",
		Detail: "deliver the watch events hold kept back, in order, and let those that follow through; relist instead ends each held watch stream with an ERROR event 410 Expired, in the stream's encoding, as kube-apiserver ends a watch whose resourceVersion is compacted, and drops what it held: the informer lists again and sees only the present, never the states in between; " +
			"a cached controller's next reconcile waits until its cache has the events; fails when nothing is held, or when the hold met nothing or failed",
		Hookable: true, Run: func(sc *language.Scenario, inv language.Invocation) error { return runRelease(sc, inv, names) },
	}, {
		Name: "mark", Args: "NAME", Group: "race", MinArgs: 1, MaxArgs: 1,
		Summary:  "name the revision of the whole store now NAME, for a later hold, restart or await since=",
		Detail:   "name the revision of the whole store now (etcd's, after every write answered so far) NAME, for a later hold ACTOR RESOURCE at=NAME; the scenario keeps old revisions from then on, so that no other scenario's compact removes it; the trace shows the mark where it was taken",
		Hookable: true, Run: runMark,
	}}
}

// target is what hold and release act on: an actor at the wire, or a
// cached controller's cache (cached set).
type target struct {
	actor  string
	cached bool
}

// targetOf reads who: a name that runs (names: what start or spawn ran,
// its last life's actor, at the wire), a registered controller (its
// cache), or an actor.
func targetOf(sc *language.Scenario, who string, names Names) (target, error) {
	if actor, ran := names(sc, who); ran {
		return target{actor: actor}, nil
	}
	for _, c := range controllers.Registered(sc) {
		if c.Name == who {
			return target{cached: true}, nil
		}
	}
	if !language.ValidActor(who) {
		return target{}, language.UsageError("bad actor name %q: want the actor whose view to hold, a lower-case name such as controller, or a registered cached controller", who)
	}
	return target{actor: who}, nil
}

// resourceOf reads a RESOURCE argument as its plural name.
func resourceOf(sc *language.Scenario, arg string) (string, error) {
	gvr, _, err := sc.ControlPlane().Resource(arg)
	if err != nil {
		return "", language.UsageError("%v", err)
	}
	return gvr.Resource, nil
}

func runHold(sc *language.Scenario, inv language.Invocation, names Names) error {
	t, err := targetOf(sc, inv.Args[0], names)
	if err != nil {
		return err
	}
	if t.cached {
		if hasOption(inv.Args[2:], "at=") {
			return language.UsageError("at= is for an actor's view at the wire: a cached controller's cache lists once, when its informers start; hold the actor of a controller that runs on its own (hold NAME %s at=...)", inv.Args[1])
		}
		return controllers.HoldCache(sc, inv.Args)
	}
	resource, err := resourceOf(sc, inv.Args[1])
	if err != nil {
		return err
	}
	rest := inv.Args[2:]
	command := "hold " + strings.Join(inv.Args, " ")
	switch {
	case len(rest) == 0:
		return holdWire(sc, viewKey{t.actor, resource}, inv.Pos, command, "", "")
	case len(rest) == 1 && strings.HasPrefix(rest[0], "at="):
		rv, label, err := resolveAt(sc, strings.TrimPrefix(rest[0], "at="))
		if err != nil {
			return err
		}
		return holdWire(sc, viewKey{t.actor, resource}, inv.Pos, command, rv, label)
	case rest[0] == "as":
		return language.UsageError("as ACTOR is for a registered cached controller's hold; %s is an actor: hold %s %s holds it at the wire", inv.Args[0], inv.Args[0], inv.Args[1])
	}
	return language.UsageError("unexpected %q: after ACTOR RESOURCE comes at=RV, at=MARK or at=SNAPSHOT, or nothing", strings.Join(rest, " "))
}

// hasOption reports whether an argument of args starts with prefix.
func hasOption(args []string, prefix string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, prefix) })
}

// HoldAt holds actor's resource (as a script names it: configmaps,
// configmap, cm) at the wire, as hold ACTOR RESOURCE at=rv at pos would:
// the actor's next list of the resource is sent as of rv (a
// resourceVersion, a mark or a snapshot; "" for the revision now), and the
// watch that follows it is held until release. For restart, which crashes
// a controller and starts it again against a stale view.
func HoldAt(sc *language.Scenario, actor, resource, rv, pos string) error {
	if !language.ValidActor(actor) {
		return language.UsageError("bad actor name %q", actor)
	}
	plural, err := resourceOf(sc, resource)
	if err != nil {
		return err
	}
	label := rv
	if rv == "" {
		now, err := sc.ControlPlane().Revision(sc.Context())
		if err != nil {
			return fmt.Errorf("read the revision now: %w", err)
		}
		rv, label = strconv.FormatInt(now, 10), strconv.FormatInt(now, 10)
	} else if rv, label, err = resolveAt(sc, rv); err != nil {
		return err
	}
	return holdWire(sc, viewKey{actor, plural}, pos, fmt.Sprintf("hold %s %s at=%s", actor, plural, label), rv, label)
}

// holdWire holds key at the wire, taken at pos by command, and, with rv,
// sends the actor's next list as of it (label names it in the trace). A
// hold there is already gets the at=, if it has none.
func holdWire(sc *language.Scenario, key viewKey, pos, command, rv, label string) error {
	if by, ok := controllers.CachedBy(sc, key.actor, key.resource); ok {
		return language.UsageError("%s reads %s from the cache racekit feeds %s, whose informers hold there: hold %s %s as %s", key.actor, key.resource, by, by, key.resource, key.actor)
	}
	if rv != "" {
		if err := keepHistory(sc, pos); err != nil {
			return err
		}
	}
	v := viewsOf(sc)
	v.mu.Lock()
	h := v.holds[key]
	switch {
	case h != nil && (rv == "" || (h.rv != "" && !h.listed)):
		v.mu.Unlock()
		return fmt.Errorf("%s's %s are held already, since %s; release them first", key.actor, key.resource, shortPos(h.pos))
	case h != nil:
		// A held view gets a past to list as of: a restart of what
		// was held, or a second restart.
		h.at, h.rv, h.listed, h.pos, h.command = label, rv, false, pos, command
	default:
		h = &hold{viewKey: key, pos: pos, command: command, at: label, rv: rv}
		v.holds[key] = h
	}
	sc.Recorder().NoteView(record.ViewChange{Change: record.ViewHold, Actor: key.actor, Resource: key.resource, At: label})
	for g := range v.gates[key] {
		g.hold()
	}
	if rv == "" && len(v.gates[key]) > 0 {
		h.met = true
	}
	v.mu.Unlock()
	return nil
}

// keepHistory takes the scenario's hold on old revisions, at pos, until
// it ends: what a mark or a hold at= names must outlast other scenarios'
// compactions.
func keepHistory(sc *language.Scenario, pos string) error {
	holds, reader := sc.ControlPlane().RevisionHolds(), sc.HistoryReader()
	taken, err := holds.Hold(reader, pos)
	if err != nil {
		return fmt.Errorf("keep old revisions: %w", err)
	}
	if taken {
		sc.Defer(func() { holds.Release(reader) })
	}
	return nil
}

// digits is a resourceVersion as a script writes one.
var digits = regexp.MustCompile(`^[0-9]+$`)

// resolveAt reads what follows at=: a resourceVersion, a mark, or a
// snapshot (its metadata.resourceVersion), and returns the
// resourceVersion and how the trace names it.
func resolveAt(sc *language.Scenario, at string) (rv, label string, err error) {
	if digits.MatchString(at) && at != "0" {
		return at, at, nil
	}
	v := viewsOf(sc)
	v.mu.Lock()
	rv, marked := v.marks[at]
	var marks []string
	for m := range v.marks {
		marks = append(marks, m)
	}
	v.mu.Unlock()
	if marked {
		return rv, at, nil
	}
	snaps := sc.Snapshots()
	if slices.Contains(snaps, at) {
		obj, err := sc.Snapshot(at)
		if err != nil {
			return "", "", err
		}
		if rv = obj.GetResourceVersion(); rv == "" {
			return "", "", language.UsageError("snapshot %s has no metadata.resourceVersion to hold at", at)
		}
		return rv, at, nil
	}
	slices.Sort(marks)
	known := "there are no marks or snapshots yet: take one with mark NAME"
	if all := append(marks, snaps...); len(all) > 0 {
		known = fmt.Sprintf("marks are %s; snapshots are %s", orNone(marks), orNone(snaps))
	}
	return "", "", language.UsageError("at=%s: no mark or snapshot called %s%s; %s (or write a resourceVersion, such as at=$RV)", at, at, language.Suggest(at, append(marks, snaps...)), known)
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func runRelease(sc *language.Scenario, inv language.Invocation, names Names) error {
	t, err := targetOf(sc, inv.Args[0], names)
	if err != nil {
		return err
	}
	if t.cached {
		if slices.Contains(inv.Args[2:], "relist") {
			return language.UsageError("relist is for an actor's view at the wire; a cached controller's cache is racekit's, and release %s %s delivers what it held", inv.Args[0], inv.Args[1])
		}
		return controllers.ReleaseCache(sc, inv.Args)
	}
	resource, err := resourceOf(sc, inv.Args[1])
	if err != nil {
		return err
	}
	rest := inv.Args[2:]
	switch {
	case len(rest) == 0:
		return releaseWire(sc, viewKey{t.actor, resource}, false, inv.Pos)
	case len(rest) == 1 && rest[0] == "relist":
		return releaseWire(sc, viewKey{t.actor, resource}, true, inv.Pos)
	}
	return language.UsageError("unexpected %q: after ACTOR RESOURCE comes relist, or nothing", strings.Join(rest, " "))
}

// releaseWire ends key's hold at the wire, at pos: each held stream
// delivers what it held, or, with relist, ends with 410 Expired. It fails
// when nothing is held, and when the hold met nothing or failed.
func releaseWire(sc *language.Scenario, key viewKey, relist bool, pos string) error {
	v := viewsOf(sc)
	v.mu.Lock()
	h := v.holds[key]
	if h == nil {
		v.mu.Unlock()
		return fmt.Errorf("release %s %s without a hold: %s", key.actor, key.resource, v.heldKeys())
	}
	delete(v.holds, key)
	change := record.ViewRelease
	if relist {
		change = record.ViewRelist
	}
	sc.Recorder().NoteView(record.ViewChange{Change: change, Actor: key.actor, Resource: key.resource})
	msg := fmt.Sprintf("The resourceVersion for the provided watch is too old. (racekit: release %s %s relist, at %s)", key.actor, key.resource, pos)
	for g := range v.gates[key] {
		if relist {
			g.expire(msg)
		} else {
			g.release()
		}
	}
	met, failed := h.met && (h.rv == "" || h.listed), h.err
	h.reported = true
	v.mu.Unlock()
	switch {
	case failed != nil:
		return fmt.Errorf("the hold at %s (%s) failed: %w", shortPos(h.pos), h.command, failed)
	case !met:
		return fmt.Errorf("the hold at %s (%s) met nothing: %s", shortPos(h.pos), h.command, unmet(h))
	}
	return nil
}

// shortPos is a script position with its file's base name, as failures
// show it.
func shortPos(pos string) string {
	file, line := language.SplitPos(pos)
	if line == 0 {
		return pos
	}
	return filepath.Base(file) + ":" + strconv.Itoa(line)
}

// unmet says what a hold that met nothing waited for.
func unmet(h *hold) string {
	if h.rv != "" && !h.listed {
		return fmt.Sprintf("%s has not listed %s since, so nothing was shown as of %s; a controller's informer lists when it starts (hold before start, spawn or a restart) or relists", h.actor, h.resource, h.at)
	}
	return fmt.Sprintf("%s had no watch of %s open and opened none while it was held, so nothing was kept back: hold a resource the actor watches", h.actor, h.resource)
}

func runMark(sc *language.Scenario, inv language.Invocation) error {
	name := inv.Args[0]
	if !language.ValidActor(name) {
		return language.UsageError("bad mark name %q: want a lower-case name such as before", name)
	}
	if err := keepHistory(sc, inv.Pos); err != nil {
		return err
	}
	rev, err := sc.ControlPlane().Revision(sc.Context())
	if err != nil {
		return fmt.Errorf("read the revision now: %w", err)
	}
	v := viewsOf(sc)
	v.mu.Lock()
	v.marks[name] = strconv.FormatInt(rev, 10)
	v.mu.Unlock()
	sc.NoteMark(name)
	sc.Recorder().NoteView(record.ViewChange{Change: record.ViewMark, Name: name})
	return nil
}

// HoldFailed returns the failure of a hold of actor's that failed and
// that nothing has reported yet, and marks it reported: an await of the
// actor fails with it at once.
func HoldFailed(sc *language.Scenario, actor string) error {
	v := viewsOf(sc)
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, h := range v.holds {
		if h.actor == actor && h.err != nil && !h.reported {
			h.reported = true
			return fmt.Errorf("the hold at %s (%s) failed: %w", shortPos(h.pos), h.command, h.err)
		}
	}
	return nil
}

// viewFailures returns, at the end of the script, the holds that failed
// and were not reported, and, when nothing else failed, those that
// nothing met: each names the hold's line.
func viewFailures(sc *language.Scenario) []language.Failure {
	quiet := len(sc.Failures()) == 0
	if t, ok := sc.T().(interface{ Failed() bool }); ok && t.Failed() {
		quiet = false // a command of testscript's own failed
	}
	v := viewsOf(sc)
	v.mu.Lock()
	defer v.mu.Unlock()
	var fs []language.Failure
	for _, h := range v.holds {
		var why error
		switch {
		case h.err != nil && !h.reported:
			why = h.err
		case h.err == nil && quiet && !(h.met && (h.rv == "" || h.listed)):
			why = errors.New("nothing met it by the end of the script: " + unmet(h))
		default:
			continue
		}
		h.reported = true
		file, line := language.SplitPos(h.pos)
		fs = append(fs, language.Failure{Kind: language.FailView, File: file, Line: line, Command: h.command, Message: why.Error()})
	}
	slices.SortFunc(fs, func(a, b language.Failure) int { return a.Line - b.Line })
	return fs
}
