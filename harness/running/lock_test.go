package running

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// TestWaitsToLeadGenerated checks, over generated lives, when a life that
// has not settled counts as settled for a wait because it cannot lead
// before the wait's bound. Each life is told as a story the generator
// knows the truth of: it read a lock another holds (a Lease, or an older
// ConfigMap lock) and wrote none, or wrote it only to be refused, or
// made anew the older lock of client-go's MultiLock while the Lease beside
// it refused its create: it waits, and cannot lead before the bound
// exactly when the lease outlasts the bound; it read the lock and took it
// (a write answered, or one in flight), took the lead on both locks of a
// MultiLock, read a lock no one holds now, or one gone since, or read no
// lock at all: it may lead, and does not count. Around each story come
// calls that change nothing of it: gets and writes of ConfigMaps that are
// no lock, lists and watches of the locks, and calls in other resources.
func TestWaitsToLeadGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 44))
	started := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	durations := []time.Duration{3 * time.Second, 15 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute}
	bounds := []time.Duration{time.Second, 30 * time.Second, 2 * time.Minute, 5 * time.Minute}
	const (
		waits = iota
		refused
		took
		inFlight
		multiLock
		halfMultiLock
		released
		gone
		noLock
		stories
	)
	var seen [stories][2]int
	for n := range 4000 {
		story := r.IntN(stories)
		duration, bound := durations[r.IntN(len(durations))], bounds[r.IntN(len(bounds))]
		lock := []string{"leases/op-lock", "configmaps/op-lock", "endpoints/op-lock"}[r.IntN(3)]
		records := map[string]lockRecord{lock: {holder: "other_1", duration: duration}}
		var calls []lockCall
		noise := func() {
			for range r.IntN(4) {
				switch r.IntN(5) {
				case 0:
					calls = append(calls, lockCall{"get", "configmaps/plain", 200})
				case 1:
					calls = append(calls, lockCall{[]string{"create", "update", "patch"}[r.IntN(3)], "configmaps/plain", []int{200, 201, 409, 0}[r.IntN(4)]})
				case 2:
					calls = append(calls, lockCall{[]string{"list", "watch"}[r.IntN(2)], "leases", 200})
				case 3:
					calls = append(calls, lockCall{"get", lock, 404})
				default:
					calls = append(calls, lockCall{[]string{"get", "update", "create"}[r.IntN(3)], "statefulsets/s", 200})
				}
			}
		}
		noise()
		at := len(calls)
		calls = append(calls, lockCall{"get", lock, 200})
		noise()
		want := false
		switch story {
		case waits:
			want = duration > bound
		case refused:
			calls = append(calls, lockCall{"update", lock, 409})
			want = duration > bound
		case took:
			calls = append(calls, lockCall{[]string{"update", "create"}[r.IntN(2)], lock, []int{200, 201}[r.IntN(2)]})
		case inFlight:
			calls = append(calls, lockCall{"update", lock, 0})
		case multiLock:
			// Both locks taken: the older one, then the Lease.
			other := "leases/op-lock"
			if lock == other {
				other = "configmaps/op-lock"
			}
			calls = append(calls, lockCall{"get", other, 200}, lockCall{"update", lock, 200}, lockCall{"update", other, 200})
			records[lock] = lockRecord{holder: "this_2", duration: duration}
			records[other] = lockRecord{holder: "this_2", duration: duration}
		case halfMultiLock:
			// The older lock was gone and the life made it anew; the
			// Lease beside it, held by another, refused its create, and
			// the life may have read it since.
			lock = "leases/op-lock"
			records = map[string]lockRecord{lock: {holder: "other_1", duration: duration}, "configmaps/op-lock": {holder: "this_2", duration: duration}}
			calls = append(calls, lockCall{"get", "configmaps/op-lock", 404}, lockCall{"create", "configmaps/op-lock", 201},
				lockCall{"create", lock, 409})
			if r.IntN(2) == 0 {
				// Its next try, a retry period later, reads both.
				calls = append(calls, lockCall{"get", "configmaps/op-lock", 200}, lockCall{"get", lock, 200})
			}
			want = duration > bound
		case released:
			records[lock] = lockRecord{holder: "", duration: duration}
		case gone:
			delete(records, lock)
		case noLock:
			calls[at] = lockCall{"get", "configmaps/plain", 200}
		}
		noise()
		read := func(object string) (lockRecord, bool) {
			rec, ok := records[object]
			return rec, ok
		}
		got := waitsToLead(calls, read, started, started.Add(bound))
		assert.Equal(t, got != "", want, "case %d, story %d, lease %v, bound %v, calls %v: %q", n, story, duration, bound, calls, got)
		if want {
			assert.Assert(t, got == fmt.Sprintf("%s is held by other_1 with a lease of %v, which it found and never wrote: started at 12:00:00, it cannot lead before %s, past the wait's bound",
				lock, duration, started.Add(duration).Format(time.TimeOnly)), got)
		}
		seen[story][boolIndex(want)]++
	}
	// Each story came often, and the waiting ones both ways.
	for s, c := range seen {
		assert.Assert(t, c[0]+c[1] > 200, "story %d generated %v times", s, c)
	}
	assert.Assert(t, seen[waits][1] > 100 && seen[waits][0] > 100, "waits: %v", seen[waits])
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}
