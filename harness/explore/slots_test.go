package explore

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"gotest.tools/v3/assert"
)

// TestSlotsGenerated holds Slots' two promises over 200 seeded cases of
// 1 to 8 slots and 1 to 40 takers, each of one or two slots (a pair of
// runs) at random, in a synctest bubble, which fails the test when every
// goroutine in it is blocked: no more are taken at once than there are
// (the first takers hold theirs until all the others wait), and every
// taker gets its hand. Each case begins with the one that
// would catch two takers of two each holding one and waiting for the
// other: one slot of two taken, two takers of two after it, then the one
// given back.
func TestSlotsGenerated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for seed := range uint64(200) {
			pair := NewSlots(2)
			first := pair.Take(1)
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() { pair.Take(2)() })
			}
			synctest.Wait()
			first()
			wg.Wait()

			r := rand.New(rand.NewPCG(seed, 7))
			n := 1 + r.IntN(8)
			s := NewSlots(n)
			var held, most atomic.Int32
			gate := make(chan struct{}) // the first takers hold their slots until every other waits
			for range 1 + r.IntN(40) {
				k := min(1+r.IntN(2), n)
				wg.Go(func() {
					release := s.Take(k)
					got := held.Add(int32(k))
					for m := most.Load(); got > m && !most.CompareAndSwap(m, got); m = most.Load() {
					}
					<-gate
					held.Add(-int32(k))
					release()
				})
			}
			synctest.Wait()
			close(gate)
			wg.Wait()
			assert.Assert(t, most.Load() <= int32(n), "seed %d: %d slots taken at once of %d", seed, most.Load(), n)
			assert.Equal(t, len(s.ch), 0, "seed %d: slots not given back", seed)
		}
	})
}
