package running

import (
	"strings"
	"time"

	"github.com/racekit/racekit/harness/language"
)

// allSettled is await's early end under Options.EndWaitsOnSettle: it
// judges every life that runs by idle's evidence, each with a settling of
// its own, and tells when all of them have settled at once. Every life,
// not the awaited actor's alone: one controller's write (a garbage
// collector's delete) may be what makes another make the awaited call.
type allSettled struct {
	sc *language.Scenario
	of map[*life]*settling
	// timer wakes the next look of the life whose look is due first.
	timer *time.Timer
	// deadline is the wait's bound; locks reads leader-election records,
	// and waiting says, at the last look, which lives counted as settled
	// because they cannot lead before it (waitsToLead).
	deadline time.Time
	locks    lockReader
	waiting  []string
	// looked is when the last step began.
	looked time.Time
}

func newAllSettled(sc *language.Scenario, deadline time.Time) *allSettled {
	return &allSettled{sc: sc, of: map[*life]*settling{}, deadline: deadline, locks: lockReader{sc: sc}}
}

// step looks at every life that runs once, and reports whether each has
// settled. A life that is restarting, has a call in flight, has not been
// shown every write to a resource it watches, or whose signal has not
// agreed twice has not; a life whose signal cannot be read has not
// either: the wait then runs to its bound, as without the option. Nor
// has a life whose workqueues have had no add though it was shown
// objects, or that has no workqueue yet (firstAdd): whether its handlers
// dropped what it was shown, or are about to add it, no evidence says.
// Ending such a wait once the life had made no call for its quiet period
// (tried on 2026-12-07) failed a wait that was to be met under load: a
// heuristic of time, which racekit's verdicts do not use. A life that has
// not settled counts as settled when it cannot lead before the wait's
// bound (waitsToLead): it found a leader-election lock another holds, with
// a lease that outlasts the bound, and never wrote that lock.
func (a *allSettled) step() bool {
	a.looked = time.Now()
	lives := runningLives(a.sc)
	all := len(lives) > 0
	a.waiting = nil
	for _, l := range lives {
		w := a.of[l]
		if w == nil {
			w = &settling{sc: a.sc}
			a.of[l] = w
		}
		done, settled, err := w.step(l)
		if done && settled != nil && err == nil {
			continue
		}
		if why := a.locks.waitingToLead(l, a.deadline); why != "" && err == nil {
			a.waiting = append(a.waiting, l.name+" waits to lead: "+why)
			continue
		}
		all = false
	}
	return all
}

// why says which lives counted as settled because they wait to lead, or
// "" when none did.
func (a *allSettled) why() string {
	if len(a.waiting) == 0 {
		return ""
	}
	return " (" + strings.Join(a.waiting, "; ") + ")"
}

// changed notes a change on the wire for every life's settling; a nil
// allSettled (no early end) has none.
func (a *allSettled) changed() {
	if a == nil {
		return
	}
	for _, w := range a.of {
		w.changed()
	}
}

// wake returns a channel that fires when the first look that is due is,
// or nil when none is (a change on the wire wakes the next).
func (a *allSettled) wake() <-chan time.Time {
	a.stopTimer()
	first := a.next(a.looked)
	if first.IsZero() {
		return nil
	}
	a.timer = time.NewTimer(time.Until(first))
	return a.timer.C
}

// next returns the first time after looked, when the last step began, at
// which a life's look is due, or the zero time when none is. That step
// looked at every life, so a due time that came before it was that look's,
// and the life set no new one: it waits for a change on the wire (a call
// in flight, a restart). Until 2026-12-07 such a time counted, and made a
// timer that fired at once, again and again, until the change came: await
// spun on a core for as long as a hook held a call. A due time the step
// set is after its start, and counts even once it has passed.
func (a *allSettled) next(looked time.Time) time.Time {
	var first time.Time
	for _, w := range a.of {
		if w.due.After(looked) && (first.IsZero() || w.due.Before(first)) {
			first = w.due
		}
	}
	return first
}

func (a *allSettled) stopTimer() {
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
}

// stop ends every timer.
func (a *allSettled) stop() {
	a.stopTimer()
	for _, w := range a.of {
		w.stopTimer()
	}
}
