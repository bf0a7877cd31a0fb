package racekit_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/harness"
)

// TestExploreFixedPortOperator explores an operator that reconciles every
// second and binds a fixed port (the ticker), eight runs at a time,
// through racekit.Play, several times over ($RACEKIT_EXPLORATIONS, 3 by
// default; make stress runs 10): every exploration must find the same runs
// failing, none n/a for want of its port, and idle must settle the
// operator by its workqueue in every run.
func TestExploreFixedPortOperator(t *testing.T) {
	explorations := 3
	if n, err := strconv.Atoi(os.Getenv("RACEKIT_EXPLORATIONS")); err == nil && n > 0 {
		explorations = n
	}
	var first []string
	for i := range explorations {
		results, err := racekit.Play(racekit.Setup{Dir: "testdata/ticker", ExploreParallel: 8})
		assert.NilError(t, err)
		assert.Equal(t, len(results), 1)
		rep := results[0].Explored
		assert.Assert(t, rep != nil, "exploration %d: no report:\n%s", i+1, results[0].Log)
		var outcomes []string
		for _, il := range rep.Interleavings {
			assert.Assert(t, !il.NotApplicable, "exploration %d: %s is n/a: %s", i+1, il.Name, il.NotApplicableWhy)
			outcome := "pass"
			if !il.Passed {
				outcome = "FAIL " + il.Failures[0].Command
			}
			outcomes = append(outcomes, il.Name+": "+outcome)
			settled := 0
			for _, r := range il.Trace.Rows() {
				if s := r.Settled; s != nil && s.Name == "ticker" {
					assert.Equal(t, s.By, harness.SettledByWorkqueue, "exploration %d, %s: %s", i+1, il.Name, s)
					settled++
				}
			}
			assert.Assert(t, settled >= 1, "exploration %d, %s: idle left no trace row", i+1, il.Name)
		}
		if i == 0 {
			first = outcomes
			// The blind update loses bob's annotation when bob writes
			// between the operator's read and its write.
			assert.Assert(t, len(rep.Failed()) > 0, "no run failed:\n%s", rep.Table())
			continue
		}
		if !cmp.Equal(outcomes, first) {
			for _, il := range rep.Interleavings {
				t.Logf("%s:\n%s", il.Name, il.Trace.Normalize())
			}
		}
		assert.DeepEqual(t, outcomes, first)
	}
}

// TestIdleSettlesAPoller: an operator that reads the API server every
// 100 ms is quiet for idle's shortest quiet period, 200 ms, only when the
// machine makes it so; idle settles it by its workqueue (testdata/poller).
// With the workqueue signal switched off, idle settled it by a quiet
// period, and the scenario failed at its trace check.
func TestIdleSettlesAPoller(t *testing.T) {
	racekit.Run(t, racekit.Setup{Dir: "testdata/poller"})
}
