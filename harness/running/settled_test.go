package running

import (
	"math/rand/v2"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// TestAllSettledNext checks, over generated sets of lives, the time of
// await's next look under EndWaitsOnSettle: the first due time after the
// last step began (now here); none when every due time came before it or
// none is set, so that wake sets no timer that fires at once (a spin
// until the next change on the wire).
func TestAllSettledNext(t *testing.T) {
	now := time.Date(2026, 12, 7, 22, 0, 0, 0, time.UTC)
	for seed := range uint64(2000) {
		r := rand.New(rand.NewPCG(seed, 7))
		a := &allSettled{of: map[*life]*settling{}}
		var want time.Time
		var dues []time.Time
		for range r.IntN(5) {
			w := &settling{}
			switch r.IntN(3) {
			case 0: // no look due: it waits for a change
			case 1: // its look was the one just taken
				w.due = now.Add(-time.Duration(r.IntN(1000)) * time.Millisecond)
			case 2:
				w.due = now.Add(time.Duration(1+r.IntN(1000)) * time.Millisecond)
				if want.IsZero() || w.due.Before(want) {
					want = w.due
				}
			}
			dues = append(dues, w.due)
			a.of[&life{}] = w
		}
		assert.Equal(t, a.next(now), want, "seed %d: due times %v", seed, dues)
	}
}

// TestAllSettledWake checks that wake makes no timer when no look is due
// after now, and one when a look is.
func TestAllSettledWake(t *testing.T) {
	past := &allSettled{looked: time.Now(), of: map[*life]*settling{{}: {due: time.Now().Add(-time.Second)}, {}: {}}}
	assert.Assert(t, past.wake() == nil)
	assert.Assert(t, past.timer == nil)
	// A look the last step set counts though its time has passed since.
	set := &allSettled{looked: time.Now().Add(-time.Second), of: map[*life]*settling{{}: {due: time.Now().Add(-time.Millisecond)}}}
	defer set.stop()
	assert.Assert(t, set.wake() != nil)
	future := &allSettled{looked: time.Now(), of: map[*life]*settling{{}: {due: time.Now().Add(time.Hour)}}}
	defer future.stop()
	assert.Assert(t, future.wake() != nil)
	assert.Assert(t, future.timer != nil)
}
