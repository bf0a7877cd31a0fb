package auto

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/language"
)

// TestMinimizeGenerated holds the shrinker's rules (minimize) on 3,000
// generated scenarios: up to 6 setup lines and up to 4 workload commands,
// each free to go, needed by the claims (leaving it out fails elsewhere
// after the workload) or needed by the run (leaving it out breaks the
// run before its claims), and some pairs of free lines that cannot both
// go. Whatever minimize returns held when tried, or is empty; at least
// one workload command stays; a line whose leaving out broke the run is
// never tried again; and with no such pairs, exactly the free lines go
// (one workload command kept when all are free).
func TestMinimizeGenerated(t *testing.T) {
	const (
		free = iota
		late
		early
	)
	for seed := range uint64(3000) {
		r := rand.New(rand.NewPCG(seed, 77))
		kind := map[line]int{}
		var setup []int
		for n := range r.IntN(7) {
			setup = append(setup, 10+n)
			kind[line{setup: true, n: 10 + n}] = r.IntN(3)
		}
		parts := r.IntN(5)
		for i := range parts {
			kind[line{n: i}] = r.IntN(3)
		}
		var frees []line
		for l, k := range kind {
			if k == free {
				frees = append(frees, l)
			}
		}
		slices.SortFunc(frees, func(a, b line) int { return (a.n + boolInt(a.setup)*100) - (b.n + boolInt(b.setup)*100) })
		var clashes [][2]line
		if len(frees) >= 2 && r.IntN(2) == 0 {
			for range 1 + r.IntN(2) {
				i, j := r.IntN(len(frees)), r.IntN(len(frees))
				if i != j {
					clashes = append(clashes, [2]line{frees[i], frees[j]})
				}
			}
		}
		out := func(c leftOut) []line {
			var ls []line
			for _, n := range c.setup {
				ls = append(ls, line{setup: true, n: n})
			}
			for _, i := range c.work {
				ls = append(ls, line{n: i})
			}
			return ls
		}
		var mu sync.Mutex
		var held []string
		brokeBy := map[line]bool{}
		try := func(c leftOut) (bool, bool) {
			ls := out(c)
			mu.Lock()
			defer mu.Unlock()
			assert.Assert(t, parts == 0 || len(c.work) < parts, "seed %d: every workload command left out: %v", seed, c)
			for _, l := range ls {
				assert.Assert(t, !brokeBy[l], "seed %d: %v tried again after it broke the run", seed, l)
			}
			isEarly, isLate := false, false
			for _, l := range ls {
				isEarly = isEarly || kind[l] == early
				isLate = isLate || kind[l] == late
			}
			for _, cl := range clashes {
				isLate = isLate || (slices.Contains(ls, cl[0]) && slices.Contains(ls, cl[1]))
			}
			if isEarly {
				// Only the line tried last can be the one: the others
				// were out in a set that held.
				for _, l := range ls {
					if kind[l] == early {
						brokeBy[l] = true
					}
				}
				return false, true
			}
			if isLate {
				return false, false
			}
			held = append(held, fmt.Sprint(key(c)))
			return true, false
		}
		got := minimize(setup, parts, try)
		if len(got.setup)+len(got.work) > 0 {
			assert.Assert(t, slices.Contains(held, fmt.Sprint(key(got))), "seed %d: %v never held", seed, got)
		}
		if len(clashes) > 0 {
			continue
		}
		var want []line
		workFree := 0
		for _, l := range frees {
			if l.setup {
				want = append(want, l)
			} else {
				workFree++
			}
		}
		// Free workload commands go while more than one is left.
		keepWork := 0
		if workFree > 0 && workFree == parts {
			keepWork = 1
		}
		gone := 0
		for _, l := range frees {
			if !l.setup && gone < workFree-keepWork {
				want = append(want, l)
				gone++
			}
		}
		gotLines := out(got)
		slices.SortFunc(gotLines, func(a, b line) int { return (a.n + boolInt(a.setup)*100) - (b.n + boolInt(b.setup)*100) })
		slices.SortFunc(want, func(a, b line) int { return (a.n + boolInt(a.setup)*100) - (b.n + boolInt(b.setup)*100) })
		assert.DeepEqual(t, fmt.Sprint(gotLines), fmt.Sprint(want))
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// key returns c's lines in order, for comparing left-out sets.
func key(c leftOut) leftOut {
	return leftOut{setup: slices.Sorted(slices.Values(c.setup)), work: slices.Sorted(slices.Values(c.work))}
}

// TestPairGenerated holds pair's rule on 2,000 generated runs of a
// scenario and its twin: the twin is stopped (its context cancelled)
// only when moot says the scenario's result alone decides, a twin that
// is still needed runs to its own end with its context whole, and pair
// returns the scenario's result and the twin's as their runs gave them.
// Each case fixes whether the result is moot and whether the twin ends
// before the scenario's run does, after it, or only when stopped.
func TestPairGenerated(t *testing.T) {
	const (
		first    = iota // the twin ends before the scenario's run
		released        // the twin ends once moot has judged
		stopped         // the twin runs until its context is cancelled
	)
	for seed := range uint64(2000) {
		r := rand.New(rand.NewPCG(seed, 31))
		moot := r.IntN(2) == 0
		order := first
		if r.IntN(2) == 0 {
			// A twin that ends only when cancelled is one whose verdict
			// is moot; one released by moot's judging, one still needed.
			order = released
			if moot {
				order = stopped
			}
		}
		want := language.Result{Name: fmt.Sprintf("plan %d", seed), Passed: r.IntN(2) == 0}
		ended, release := make(chan struct{}), make(chan struct{})
		var cancelled error
		twin := func(ctx context.Context) language.Result {
			defer close(ended)
			switch order {
			case first:
				return language.Result{Name: "twin", Passed: true}
			case released:
				select {
				case <-release:
				case <-ctx.Done():
				}
			default:
				<-ctx.Done()
			}
			cancelled = ctx.Err()
			return language.Result{Name: "twin", Passed: cancelled == nil, Log: fmt.Sprint(cancelled)}
		}
		run := func(ctx context.Context) language.Result {
			if order == first {
				<-ended
			}
			return want
		}
		calls := 0
		plan, tw := pair(context.Background(), run, twin, func(got language.Result) bool {
			calls++
			assert.DeepEqual(t, got, want)
			if !moot {
				close(release)
			}
			return moot
		})
		assert.Equal(t, calls, 1, "seed %d", seed)
		assert.DeepEqual(t, plan, want)
		switch order {
		case first:
			assert.Assert(t, tw.Passed, "seed %d: a twin that ended first keeps its result: %+v", seed, tw)
		case released:
			assert.NilError(t, cancelled, "seed %d: a twin still needed was stopped", seed)
			assert.Assert(t, tw.Passed, "seed %d", seed)
		case stopped:
			assert.ErrorIs(t, cancelled, context.Canceled, "seed %d", seed)
			assert.Assert(t, !tw.Passed, "seed %d", seed)
		}
	}
}
