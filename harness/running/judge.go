package running

import (
	"fmt"

	"github.com/racekit/racekit/harness/record"
)

// The rules by which idle's readings of a life's signal settle it, apart
// from how the readings are taken (idle.go, settle.go, metrics.go): pure,
// so that TestJudgeModel can weigh them against a model of a workqueue.

// readings is what idle keeps of a life's earlier readings: the last,
// prev, and the anchor, the earliest since which nothing was written;
// each with the length of the trace before it was taken (an entry
// recorded while it was being taken counts as after it).
type readings struct {
	prev     *reading
	prevAt   int
	anchor   *reading
	anchorAt int
}

// verdict is what judge makes of a reading.
type verdict int

const (
	unsettled verdict = iota
	agreed            // two readings in a row agree
	repeated          // a reconcile ran to its end since the anchor, and the life is idle
)

// judge weighs rd, taken when the trace was at entries long, with the
// readings before it, and keeps it; wire(from) says what came on the wire
// from the trace's entry from on. It settles the life by either of two
// rules.
//
// Two readings in a row agree: both show it idle, and either nothing came
// on the wire between them and they saw the same, or, for a signal that
// counts the work (a workqueue's), what came was only reads, answered,
// and no back-off began (between, the life may have reconciled, as a
// poller does, but it changed nothing and nothing is left). To goroutines,
// a read between is a change: a loop that never stops reading looks
// parked at every reading, as it waits for each answer, and two readings
// with its reads between settled it (idle_never.txtar, with noise).
//
// A reconcile ran since the anchor (repeats): rd shows it idle, and since
// the anchor nothing was written by anyone, no back-off began, and a
// reconcile taken after the anchor ran to its end. A poller under load is
// caught reconciling at most readings, so that two idle readings in a row
// may be rare; the anchor stays until a write or a back-off moves it on
// to a later reading.
//
// A write by anyone, a hook's firing or a change of a view means a
// reconcile may be due, and the readings must agree again after it.
// TestJudgeModel checks both rules against a model of a workqueue.
func (j *readings) judge(rd reading, at int, wire func(from int) wireChange) verdict {
	defer func() { j.prev, j.prevAt = &rd, at }()
	if rd.idle && j.prev != nil && j.prev.idle {
		switch since := wire(j.prevAt); {
		case since == wireQuiet && j.prev.seen == rd.seen, since == wireReads && rd.counted && j.prev.backoffs == rd.backoffs:
			return agreed
		}
	}
	if j.anchor != nil {
		since := wire(j.anchorAt)
		if repeats(j.anchor, rd, since) {
			return repeated
		}
		if since == wireWrites || !rd.counted || rd.backoffs != j.anchor.backoffs {
			j.anchor = nil
		}
	}
	if j.anchor == nil && rd.counted {
		j.anchor, j.anchorAt = &rd, at
	}
	return unsettled
}

// repeats reports whether rd settles a poller since anchor, an earlier
// reading: rd shows it idle (nothing queued, taken or running), every
// reconcile taken by the anchor and one more taken after it ran to its
// end before rd (rd's finished items outnumber the anchor's taken ones),
// no back-off began, and the wire since the anchor holds answered reads
// at most, by anyone. That reconcile read the state as it is now, since
// nothing was written, and changed nothing; nothing is left running or
// queued. rd must show it idle: an item queued or a reconcile running at
// rd may be another item's, one the anchor caught on a state before the
// last write, whose next reconcile will write (without rd.idle,
// TestJudgeModel found a run with three items that settled while an item
// queued owed a write, and, while the rule still asked for an empty
// queue, one while a reconcile running did). What this rule cannot see is
// an item that waits for a delay (docs/reliability.md).
func repeats(anchor *reading, rd reading, since wireChange) bool {
	return anchor != nil && anchor.counted && rd.counted && rd.idle && since != wireWrites &&
		rd.dones > anchor.gets && rd.backoffs == anchor.backoffs
}

// wireChange is what came on the wire between two readings of a life's
// signal.
type wireChange int

const (
	wireQuiet  wireChange = iota // nothing
	wireReads                    // only reads (get, list, watch), answered
	wireWrites                   // a write, a hook's firing, a view's change, or a call not answered yet
)

// wireSince returns what the entries t are, leaving out the calls on the
// resources ignore names; countsWork is set for a signal that shows the
// work a call in flight belongs to (a workqueue's metrics), for which a
// read in flight is a read.
func wireSince(t record.Trace, ignore map[string]bool, countsWork bool) wireChange {
	out := wireQuiet
	for _, e := range t {
		x := e.Exchange
		switch {
		case e.Settled != nil:
			// Another idle's row: no change of anything.
		case x == nil:
			return wireWrites
		case ignore[x.Resource]:
		case x.Code == 0 && !countsWork:
			// Not answered yet, and the signal cannot see the work it
			// belongs to: a goroutine that waits for an answer is
			// parked, and looks idle.
			return wireWrites
		case x.Code == 0 || x.Code/100 != 2 && x.Code != 404:
			// Not answered yet, or refused. A read changes nothing
			// either way: one in flight now, to a signal that counts
			// the work (a workqueue's), was sent after the reading
			// (each look starts with no call in flight), by a reconcile
			// the next reading shows, or one that repeats the last
			// (repeats). A write that failed changes nothing either,
			// but one in flight, or in transport trouble, may.
			if !readVerbs[x.Verb] {
				return wireWrites
			}
			out = wireReads
		case readVerbs[x.Verb]:
			out = wireReads
		default:
			return wireWrites
		}
	}
	return out
}

// readVerbs are the verbs that change nothing.
var readVerbs = map[string]bool{"get": true, "list": true, "watch": true}

// firstAdd keeps a reading of a fresh process's workqueues from showing
// it idle before its informers have handed it anything: once a list or a
// watch has shown the life shown objects, a process whose queues have had
// no item added yet has work on its way (an informer stores what it
// listed before its handlers add it to a queue, and controller-runtime
// makes its queue before its caches sync), not none. Without it, idle
// settled a restarted rabbitmq operator between its list of
// rabbitmqclusters and its first reconcile. Before the life has listed
// or watched anything (listed false), a process whose queues have had no
// item added has not looked yet: controller-runtime v0.25 makes its
// queues when the controller is built, before the manager starts, and
// idle settled such a process between its discovery calls and its first
// list. A controller whose predicates drop every object it is shown
// never adds one, and idle waits for it until its time is up, saying so.
func firstAdd(rd *reading, shown int, listed bool) {
	if !rd.idle || !rd.counted || rd.adds > 0 {
		return
	}
	switch {
	case !listed:
		rd.idle, rd.why = false, "it has listed and watched nothing yet, and no item has reached a workqueue (workqueue_adds_total 0)"
	case shown > 0:
		rd.idle, rd.why = false, fmt.Sprintf("its informers were shown %d objects, and none has reached a workqueue yet (workqueue_adds_total 0)", shown)
	}
}
