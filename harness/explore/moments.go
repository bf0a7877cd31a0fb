package explore

import (
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/hooks"
)

// Equivalence is a moment explore left out, with the moment it is the same
// as (its twin, which it explores instead).
type Equivalence struct {
	Moment Moment
	Twin   Moment
}

// learned is what the learning run says about the workload's moments:
// every moment, in order, and for each the index of the moment it is
// equivalent to (its own when it is its own), and whether it is left out
// because it races with a controller that runs on its own.
type learned struct {
	all    []Moment
	twin   []int
	racing []bool
	// rows are the learning run's trace from the workload's first call
	// on (Report.Learning).
	rows []record.Row
}

// moments lists every moment of the calls after seq from in tr: before
// each call, and after each answer; watches are no moments. armed are the
// hooks the script armed before the explore line.
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
//     edits a snapshot the interferer sends).
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
// The moment after a write races with every other actor that runs on its
// own (onTheirOwn) and watches: its watch brings it the write as soon as
// the API server has made it, so it may act before a hook at the writer's
// after point has, or after, from run to run. Those moments are left out
// (racing); the moment before the write, and the watcher's own calls, are
// not.
func moments(tr record.Trace, from int, armed []hooks.Hook, keep func(hooks.Call) bool, onTheirOwn map[string]bool) learned {
	watching := map[string]bool{}
	for _, x := range tr.Exchanges() {
		if x.Verb == "watch" {
			watching[x.Actor] = true
		}
	}
	races := func(x *record.Exchange) bool {
		if !record.WriteVerbs[x.Verb] && x.Verb != "deletecollection" {
			return false
		}
		for a := range onTheirOwn {
			if a != x.Actor && watching[a] {
				return true
			}
		}
		return false
	}
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
		l.all, l.racing = append(l.all, before), append(l.racing, false)
		if prev != nil && prev.Actor == x.Actor && x.Seq == lastSeq+1 && !watching[x.Actor] && !fired && !couldFire(armed, prev.Call, x.Call) {
			l.twin = append(l.twin, len(l.all)-2) // the previous call's after
		} else {
			l.twin = append(l.twin, len(l.all)-1)
		}
		racing := races(x)
		l.all, l.racing = append(l.all, after), append(l.racing, racing)
		l.twin = append(l.twin, len(l.all)-1)
		prev, lastSeq, fired = x, x.Seq, false
		if racing {
			// The next call's before is no twin of a moment left out.
			prev = nil
		}
	}
	return l
}

// exhaustive makes every moment of l one of its own, explored: none is
// equivalent to another, and none is left out as racing.
func (l *learned) exhaustive() {
	for i := range l.twin {
		l.twin[i] = i
		l.racing[i] = false
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
// race with nothing; the equivalences of the others; and those left out
// as racing.
func (l learned) kept() ([]Moment, []Equivalence, []Moment) {
	var out, racing []Moment
	var eq []Equivalence
	for i, m := range l.all {
		switch {
		case l.racing[i]:
			racing = append(racing, m)
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
