package running

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
)

// Waiting for what runs on its own to have nothing left to do (idle), on
// the strongest evidence it offers (settle.go), and for it to end (ended).
var idleCommands = []*language.Command{
	{
		Name: "idle", Args: "NAME [quiet=DURATION] [ignore=RESOURCE,...] [within=DURATION]", Group: "run", MinArgs: 1, MaxArgs: 4,
		Summary: "wait until what start or spawn runs as NAME has nothing left to do, on the strongest evidence it offers",
		Detail: "wait until what start or spawn runs as NAME has nothing left to do, on the strongest evidence it offers, which the trace names (idle: NAME settled by ...): " +
			"its exit; for a controller started in process, every goroutine of its life parked (waiting on a channel, a lock, a timer or the network); for a process spawned with metrics=, its workqueues empty and nothing it took unfinished (workqueue_depth, workqueue_queue_duration_seconds and workqueue_work_duration_seconds, controller_runtime_active_workers); " +
			"each in two readings in a row that agree, with nothing on the wire between them or, by its workqueue, only reads and no back-off begun (an error's or a rate-limited requeue's; a RequeueAfter is not one), or, for a poller, which a reading nearly always catches polling, in a reading since an earlier one of which nothing was written by anyone, no back-off began and a whole reconcile taken after the earlier one ran to its end; with no call of its in flight (a call a hook's action holds is in flight) and each watch it has open having shown it every write made to its resource before now; " +
			"an item that waits for a delay (a RequeueAfter, a retry's backoff) is not work: await the outcome of a retry first; " +
			"a process without metrics= falls back to a quiet period, a heuristic of time: no call for quiet= (default ten times the slowest answer, at least " + minQuiet.String() + " and at most " + maxQuiet.String() + "); " +
			"ignore=RESOURCE,... leaves calls and watches of those resources out (leases renewed by leader election); fails after DURATION (default " + DefaultWait.String() + ") saying what was still busy, or at once when NAME ended on its own with an error",
		Run: runIdle,
	},
	{
		Name: "ended", Args: "NAME [within=DURATION]", Group: "run", MinArgs: 1, MaxArgs: 2,
		Summary: "wait until what start or spawn runs as NAME has ended on its own, and print how to stdout",
		Detail: "wait until what start or spawn runs as NAME has ended on its own (a process exited, Run returned), and print how to stdout: for a program expected to stop by itself; " +
			"fails at once when it was halted or crashed, and after DURATION (default " + DefaultWait.String() + ") when it still runs",
		Run: runEnded,
	},
}

// The bounds of the quiet period of a life that offers no other evidence.
const (
	minQuiet = 200 * time.Millisecond
	maxQuiet = 2 * time.Second
)

// lookAgain bounds how soon, and how late, idle reads a signal again that
// has no way to tell it that it changed (goroutines, metrics): when it
// reads decides only how soon idle sees the change, never whether a reading
// settles the life.
const (
	firstLook = 5 * time.Millisecond
	lastLook  = time.Second
)

var idleOptions = []string{"quiet", "ignore", "within"}

func runIdle(sc *language.Scenario, inv language.Invocation) error {
	r, err := running(sc, inv.Args[0])
	if err != nil {
		return err
	}
	o, err := language.ParseOptions(inv.Args[1:], idleOptions)
	if err != nil {
		return err
	}
	within, err := language.DurationOption(o, "within", waitTimeout(sc))
	if err != nil {
		return err
	}
	quiet, err := language.DurationOption(o, "quiet", 0)
	if err != nil {
		return err
	}
	ignore, err := ignoreOption(sc, o["ignore"])
	if err != nil {
		return err
	}
	return waitIdle(sc, r, &settling{sc: sc, quiet: quiet, ignore: ignore}, within)
}

// waitIdle waits until r's last life has settled, as w judges its
// readings, and notes the evidence in the trace; it fails after within,
// or, under Options.EndWaitsOnSettle, as soon as the life cannot settle
// before then (idleEndsEarly).
func waitIdle(sc *language.Scenario, r *lifeline, w *settling, within time.Duration) error {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	defer w.stopTimer()
	var locks *lockReader
	if sc.Options().EndWaitsOnSettle {
		locks = &lockReader{sc: sc}
	}
	bound := time.Now().Add(within)
	for {
		changed, flew := sc.Recorder().Changes(), sc.InFlight().Changes()
		l := lastLife(sc, r)
		done, settled, err := w.step(l)
		if err != nil || done {
			if settled != nil {
				sc.Recorder().NoteSettled(*settled)
			}
			return err
		}
		if why := idleEndsEarly(locks, l, w.noQueue == l, bound); why != "" {
			return fmt.Errorf("%s cannot settle before the wait's bound: its metrics show no workqueue, which such a process makes as it leads, and it waits to lead: %s (%w: the wait ends there, not at its bound, in explore auto's shrinking)\n%s", l.name, why, language.ErrSettled, sc.Trace().Tail(15))
		}
		select {
		case <-changed:
			w.changed()
		case <-flew:
			w.changed()
		case <-w.wake():
		case <-deadline.C:
			flying := ""
			if fs, _ := sc.InFlight().Of(l.actor); len(fs) > 0 {
				flying = "; in flight now, hooks and all: " + record.DescribeFlights(fs)
			}
			return fmt.Errorf("%w: %s was still busy after %v (%s)%s: %s\n%s", errWaited, l.name, within, w.busy, flying, actorSummary(sc, l.actor), sc.Trace().Tail(15))
		case <-sc.Context().Done():
			return sc.Context().Err()
		}
	}
}

// idleEndsEarly says why l cannot settle before bound, for explore auto's
// shrinker (locks set, Options.EndWaitsOnSettle), or "": the last reading
// of its metrics showed no workqueue (noQueue), and it cannot lead before
// bound (waitsToLead). A controller-runtime process before v0.15 makes
// its queues as its controllers start, which under leader election is
// once it leads: until then idle's evidence cannot settle it, and the
// wait would run to its bound and fail.
func idleEndsEarly(locks *lockReader, l *life, noQueue bool, bound time.Time) string {
	if locks == nil || !noQueue {
		return ""
	}
	return locks.waitingToLead(l, bound)
}

// ignoreOption reads ignore=RESOURCE,...: resources the API server has.
func ignoreOption(sc *language.Scenario, v string) (map[string]bool, error) {
	out := map[string]bool{}
	if v == "" {
		return out, nil
	}
	for _, res := range strings.Split(v, ",") {
		gvr, _, err := sc.ControlPlane().Resource(res)
		if err != nil {
			return nil, language.UsageError("ignore=%s: %v", v, err)
		}
		out[gvr.Resource] = true
	}
	return out, nil
}

// settling is one idle's state between its looks at a life: the last
// reading of its signal, since which nothing has changed on the wire, and
// the timer of its next look.
type settling struct {
	sc     *language.Scenario
	quiet  time.Duration
	ignore map[string]bool
	// readings are the readings so far; busy says what kept the life
	// busy at the last look, for the message on time out.
	readings
	busy string
	// noQueue is the life whose last reading showed metrics with no
	// workqueue (reading.noQueue), or nil.
	noQueue *life
	// timer wakes the next look; interval is how long it waits, doubling
	// from firstLook to lastLook while nothing changes.
	timer    *time.Timer
	interval time.Duration
	// due is when timer fires; zero when no look is due.
	due time.Time
}

// changed notes a change on the wire: the next look comes soon. The
// reading before it still counts if what changed was only reads
// (confirm).
func (w *settling) changed() {
	w.interval = 0
	w.stopTimer()
}

func (w *settling) stopTimer() {
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	w.due = time.Time{}
}

// wake returns the channel of the next look's timer, or nil when no look
// is due (a change on the wire is).
func (w *settling) wake() <-chan time.Time {
	if w.timer == nil {
		return nil
	}
	return w.timer.C
}

// after sets the next look for d from now.
func (w *settling) after(d time.Duration) {
	w.stopTimer()
	w.timer = time.NewTimer(d)
	w.due = time.Now().Add(d)
}

// lookAgain sets the next look of a signal that cannot say it changed.
func (w *settling) lookAgain() {
	switch {
	case w.interval == 0:
		w.interval = firstLook
	case w.interval < lastLook:
		w.interval = min(2*w.interval, lastLook)
	}
	w.after(w.interval)
}

// step looks at l once: done when it has settled (settled says by what)
// or when idle must fail (err).
func (w *settling) step(l *life) (done bool, settled *record.Settled, err error) {
	sc := w.sc
	// The trace's length before anything is looked at: what is recorded
	// from here on counts as after this look's reading.
	_, at := sc.Recorder().Since(math.MaxInt)
	note := func(by record.SettleSignal, detail string) *record.Settled {
		return &record.Settled{Name: l.name, Actor: l.actor, By: by, Detail: detail}
	}
	restarting := l.crash.restarting()
	switch ended, runErr := l.ended(); {
	case restarting:
		w.busy = "its restart has not started its new life yet"
		return false, nil, nil
	case l.crash.at() != "":
		return true, note(record.SettledByExit, "crashed at "+l.crash.at()), nil
	case ended && runErr != nil && l.haltedAt() == "":
		return true, nil, errors.New(l.describe())
	case ended:
		return true, note(record.SettledByExit, "it ended"), nil
	}
	a := activityOf(sc, l, w.ignore)
	if a.busy {
		w.busy = "a call of its is in flight"
		return false, nil, nil
	}
	if up, why := caughtUp(sc, l.actor, l.firstSeq, w.ignore); !up {
		w.busy = why
		return false, nil, nil
	}
	const common = "no call of its in flight, each watch caught up, "
	switch {
	case l.label != "":
		rd, err := goroutineReading(l.label)
		if err != nil {
			return true, nil, err
		}
		return w.confirm(rd, at, "by its goroutines", note(record.SettledByGoroutines, common+"every goroutine of its life parked"))
	case l.metrics != "":
		rd, err := metricsReading(sc.Context(), l.metrics)
		if err != nil {
			return true, nil, err
		}
		shown, listed := shownObjects(sc, l.actor, l.firstSeq)
		firstAdd(&rd, shown, listed)
		w.noQueue = nil
		if rd.noQueue {
			w.noQueue = l
		}
		return w.confirm(rd, at, "by its workqueue", note(record.SettledByWorkqueue, common+"its workqueues empty and nothing it took unfinished"))
	}
	q, detail := a.quiet, "then no call for its quiet period (ten times the slowest answer, "+minQuiet.String()+" to "+maxQuiet.String()+")"
	if w.quiet > 0 {
		q, detail = w.quiet, "then no call for "+w.quiet.String()+" (quiet=)"
	}
	left := q - time.Since(a.last)
	if left <= 0 {
		return true, note(record.SettledByQuiet, common+detail), nil
	}
	w.busy = fmt.Sprintf("by a quiet period, a heuristic of time: it had called less than %v before", q)
	w.after(left)
	return false, nil, nil
}

// confirm settles the life on rd, a reading taken when the trace was at
// entries long, when the readings so far settle it (readings.judge), and
// otherwise keeps rd and looks again.
func (w *settling) confirm(rd reading, at int, by string, settled *record.Settled) (bool, *record.Settled, error) {
	switch w.judge(rd, at, func(from int) wireChange { return w.wireSince(from, rd) }) {
	case agreed:
		return true, settled, nil
	case repeated:
		settled.Detail += "; since an earlier reading nothing was written, and a reconcile it took after that reading ran to its end, reading only"
		return true, settled, nil
	}
	w.busy = by + ": " + rd.why
	if rd.idle {
		w.busy = by + ": its last two readings did not agree yet"
	}
	w.lookAgain()
	return false, nil, nil
}

// wireSince returns what came on the wire from the trace's entry from on
// to now, to be weighed with rd: everything, when the trace is shorter
// than from.
func (w *settling) wireSince(from int, rd reading) wireChange {
	t, now := w.sc.Recorder().Since(from)
	if now < from {
		return wireWrites
	}
	return wireSince(t, w.ignore, rd.counted)
}

// activity is what idle knows of a life's calls.
type activity struct {
	// last is when its last call entered the transport, was answered or
	// was done, or when the life began, whichever is later.
	last time.Time
	// busy is set while one of its calls (a watch aside, which stays
	// open) is in flight: held by a hook, or on the wire.
	busy bool
	// quiet is the period idle waits for, from the slowest answer so
	// far.
	quiet time.Duration
}

// activityOf returns what idle knows of l's calls, those on ignore's
// resources left out.
func activityOf(sc *language.Scenario, l *life, ignore map[string]bool) activity {
	a := activity{last: l.started}
	var slowest time.Duration
	sc.Recorder().Scan(func(x *record.Exchange) {
		if x.Verb != "watch" && x.Duration > slowest {
			slowest = x.Duration
		}
		if x.Actor != l.actor || ignore[x.Resource] {
			return
		}
		if end := x.Start.Add(x.Duration); end.After(a.last) {
			a.last = end
		}
		if x.Code == 0 && x.Err == "" && x.Verb != "watch" {
			a.busy = true
		}
	})
	flying, last := sc.InFlight().Of(l.actor)
	for _, fl := range flying {
		if !ignore[fl.Call().Resource] {
			a.busy = true
		}
	}
	// The time of the last change of the actor's calls in flight counts
	// unless some are to be ignored, whose times it may be.
	if len(ignore) == 0 && last.After(a.last) {
		a.last = last
	}
	a.quiet = min(max(10*slowest, minQuiet), maxQuiet)
	return a
}

func runEnded(sc *language.Scenario, inv language.Invocation) error {
	r, err := running(sc, inv.Args[0])
	if err != nil {
		return err
	}
	o, err := language.ParseOptions(inv.Args[1:], waitOptions)
	if err != nil {
		return err
	}
	within, err := language.DurationOption(o, "within", waitTimeout(sc))
	if err != nil {
		return err
	}
	l := lastLife(sc, r)
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case <-l.done:
	case <-timer.C:
		return fmt.Errorf("%w: %s %s still runs after %v: %s", errWaited, l.what, l.name, within, actorSummary(sc, l.actor))
	case <-sc.Context().Done():
		return sc.Context().Err()
	}
	if l.over() != "" {
		return fmt.Errorf("%s did not end on its own: %s", l.name, l.describe())
	}
	fmt.Fprintln(inv.Stdout, l.describe())
	return nil
}

var waitOptions = []string{"within"}
