package explore

import (
	"slices"
	"strings"

	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/harness/running"
	"github.com/racekit/racekit/hooks"
)

// Equivalence is a moment explore left out, with the moment it is the same
// as (its twin, which it explores instead).
type Equivalence struct {
	Moment Moment
	Twin   Moment
}

// Race is a moment explore left out because it races with controllers
// that run on their own: the moment after a write, which each of Watchers
// watches while it runs, so that its watch may bring it the write before
// a hook there has run, or after, from run to run.
type Race struct {
	Moment   Moment
	Watchers []Watcher
}

// LeftOut says why r's moment was not explored, as the table does:
// "left out: races NAME, which watches RESOURCE", for each watcher.
func (r Race) LeftOut() string {
	var ws []string
	for _, w := range r.Watchers {
		ws = append(ws, w.String())
	}
	return "left out: races " + strings.Join(ws, "; and ")
}

// Watcher is a controller that runs on its own (start, spawn) and watches
// what a write changed, in a life that ran when the write was sent.
type Watcher struct {
	// Name is what start or spawn ran it as; Actor is the actor of its
	// calls.
	Name, Actor string
	// Watch is what its watch names, as the trace does: configmaps, or
	// configmaps/a for a watch of one object.
	Watch string
}

// String renders w as the table does: its name, its actor when that is
// another, and what it watches.
func (w Watcher) String() string {
	who := w.Name
	if w.Actor != w.Name {
		who += " (as " + w.Actor + ")"
	}
	return who + ", which watches " + w.Watch
}

// learned is what the learning run says about the workload's moments:
// every moment, in order, and for each the index of the moment it is
// equivalent to (its own when it is its own), and the watchers it races
// with, when it is left out because it races.
type learned struct {
	all    []Moment
	twin   []int
	racing [][]Watcher
	// rows are the learning run's trace from the workload's first call
	// on (Report.Learning).
	rows []record.Row
	// trace is the learning run's whole trace, from the last sequence
	// number before the workload's calls, and lives what ran on its
	// own in it: for explore auto's planner (Learned).
	trace record.Trace
	from  int
	lives []running.Life
	// seq is the sequence number of each moment's call, by index.
	seq []int
}

// moments lists every moment of the calls after seq from in tr: before
// each call, and after each answer; watches are no moments. armed are the
// hooks the script armed before the explore line; lives are the lives of
// what ran on its own (running.Lives).
//
// After call k of an actor and before its call k+1 are one moment (the
// after one is kept as the twin) when nothing can happen between them in
// any run hooked there:
//
//   - no call of anyone (a watch included) came between them in the
//     learning run: the actor does nothing another writer could change
//     between receiving one answer and sending its next request, since
//     the request is built before the before-hooks run;
//   - the actor has no watch in the trace: a cached controller reads its
//     cache in between, which a write changes once the watch brings it;
//   - no hook fired between them in the learning run, and no hook of armed
//     could fire there in another run: none at after that could match
//     call k, none at before that could match call k+1, whatever its
//     occurrence. Such a hook, armed before the interferer, runs first at
//     its point: an interferer at after k would run before its action, at
//     before k+1 after it, and the two orders need not agree (a hook that
//     edits a snapshot the interferer sends);
//   - nothing that runs on its own began or ended between them (a start,
//     spawn, halt or crash in a do, or a process's own exit): an
//     interferer at after k would meet another world than at before k+1.
//
// A hook armed at the explore line fires at a point where the run has been
// the learning run so far (nothing before it was hooked), so what held
// between the two points there holds in the run: the rule is sound for the
// first hook of a run. Later hooks (depth 2) see a run an earlier one has
// changed, and with every a hook fires again after its first time: for
// those, every moment counts (Explore).
//
// keep says which calls' moments count (only=): another call is no moment,
// but it still comes between the two that it separates.
//
// The moment after a write races with each other actor that runs on its
// own and watches the written object then (racers): its watch brings it
// the write as soon as the API server has made it, so it may act before a
// hook at the writer's after point has, or after, from run to run. Those
// moments are left out, each with the watchers it races with (Race); the
// moment before the write, and the watcher's own calls, are not.
func moments(tr record.Trace, from int, armed []hooks.Hook, keep func(hooks.Call) bool, lives []running.Life) learned {
	watching := map[string]bool{}
	for _, x := range tr.Exchanges() {
		if x.Verb == "watch" {
			watching[x.Actor] = true
		}
	}
	watchers := racers(tr, lives)
	occ := map[string]int{}
	var l learned
	var prev *record.Exchange
	lastSeq := from
	fired := false // a hook fired since the last exchange
	for _, e := range tr {
		if e.Hook != nil {
			fired = true
			continue
		}
		x := e.Exchange
		if x == nil || x.Seq <= from || x.Foreign {
			continue
		}
		if x.Verb == "watch" || !keep(x.Call) {
			lastSeq, fired = x.Seq, false
			prev = nil
			continue
		}
		key := x.Actor + " " + x.Verb + " " + x.Object()
		occ[key]++
		m := Moment{Actor: x.Actor, Verb: x.Verb, Object: x.Object(), Occ: occ[key]}
		before, after := m, m
		before.Point, after.Point = "before", "after"
		l.all, l.racing = append(l.all, before), append(l.racing, nil)
		l.seq = append(l.seq, x.Seq, x.Seq)
		if prev != nil && prev.Actor == x.Actor && x.Seq == lastSeq+1 && !watching[x.Actor] && !fired && !couldFire(armed, prev.Call, x.Call) && !lifeBetween(lives, prev.Seq) {
			l.twin = append(l.twin, len(l.all)-2) // the previous call's after
		} else {
			l.twin = append(l.twin, len(l.all)-1)
		}
		racing := watchers(x)
		l.all, l.racing = append(l.all, after), append(l.racing, racing)
		l.twin = append(l.twin, len(l.all)-1)
		prev, lastSeq, fired = x, x.Seq, false
		if racing != nil {
			// The next call's before is no twin of a moment left out.
			prev = nil
		}
	}
	return l
}

// racers returns what tells, for a write of the trace, the watchers that
// race with the moment after it, or nil when none does: each actor of
// lives, other than the writer's, with a life that ran when the write was
// sent (begun before it, and gone only after) and, in that life, a watch
// the API server answered that sees the written object. A watch sees an
// object of its resource in its namespace (the scenario's: a watch of
// every namespace is confined to it) or, for a cluster-wide resource,
// every one, and of its name when it names one. The watch may come after
// the write in that life: an informer that lists after the write sees it
// in its list, when it likes, as it would have through its watch.
func racers(tr record.Trace, lives []running.Life) func(x *record.Exchange) []Watcher {
	type watch struct {
		life running.Life
		call hooks.Call
	}
	var watches []watch
	for _, x := range tr.Exchanges() {
		if x.Verb != "watch" || x.Foreign || x.Service != "" || x.Code/100 != 2 {
			continue
		}
		for _, lf := range lives {
			if lf.Actor == x.Actor && during(lf, x.Seq) {
				watches = append(watches, watch{lf, x.Call})
			}
		}
	}
	return func(x *record.Exchange) []Watcher {
		if !record.WriteVerbs[x.Verb] && x.Verb != "deletecollection" || x.Service != "" {
			return nil
		}
		var out []Watcher
		for _, w := range watches {
			c := w.call
			sees := c.Resource == x.Resource && (c.Namespace == "" || c.Namespace == x.Namespace) && (c.Name == "" || x.Name == "" || c.Name == x.Name)
			if w.life.Actor == x.Actor || !sees || !during(w.life, x.Seq) {
				continue
			}
			wr := Watcher{Name: w.life.Name, Actor: w.life.Actor, Watch: c.Object()}
			if !slices.Contains(out, wr) {
				out = append(out, wr)
			}
		}
		return out
	}
}

// during reports whether a call sent at seq was sent while lf ran.
func during(lf running.Life, seq int) bool {
	return seq > lf.From && (!lf.Gone || seq <= lf.To)
}

// lifeBetween reports whether a life of lives began or was gone after the
// call sent at seq and before the next one.
func lifeBetween(lives []running.Life, seq int) bool {
	for _, lf := range lives {
		if lf.From == seq || lf.Gone && lf.To == seq {
			return true
		}
	}
	return false
}

// exhaustive makes every moment of l one of its own, explored: none is
// equivalent to another, and none is left out as racing.
func (l *learned) exhaustive() {
	for i := range l.twin {
		l.twin[i] = i
		l.racing[i] = nil
	}
}

// couldFire reports whether a hook of armed could fire after call k or
// before call next, whatever its occurrence.
func couldFire(armed []hooks.Hook, k, next hooks.Call) bool {
	for _, h := range armed {
		if h.Point == hooks.After && h.Match.Matches(k) || h.Point == hooks.Before && h.Match.Matches(next) {
			return true
		}
	}
	return false
}

// kept returns the moments explored, those that are their own twin and
// race with nothing; the equivalences of the others; and the races of
// those left out as racing.
func (l learned) kept() ([]Moment, []Equivalence, []Race) {
	var out []Moment
	var racing []Race
	var eq []Equivalence
	for i, m := range l.all {
		switch {
		case l.racing[i] != nil:
			racing = append(racing, Race{Moment: m, Watchers: l.racing[i]})
		case l.twin[i] == i:
			out = append(out, m)
		default:
			eq = append(eq, Equivalence{Moment: m, Twin: l.all[l.twin[i]]})
		}
	}
	return out, eq, racing
}

// index returns m's place among all the moments, for ordering runs.
func (l learned) index(m Moment) int {
	for i, x := range l.all {
		if x == m {
			return i
		}
	}
	return len(l.all)
}
