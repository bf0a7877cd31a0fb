package scenarios

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/racekit/racekit/harness"
)

var rounds = flag.Int("determinism", 0, "run the whole catalogue this many times and compare the normalized traces of the runs (default $"+roundsEnv+", or 0)")

// roundsEnv sets -determinism's default. make test sets it instead of the
// flag because it tests every package in one go test command, which
// would hand a flag to packages that do not define it.
const roundsEnv = "RACEKIT_DETERMINISM"

// TestDeterminism runs every scenario -determinism times, each round in
// parallel as usual, and fails on any failed run and on any difference
// between the normalized traces of one scenario's runs (for an explore
// scenario, its table and every interleaving's trace too). It ends with one
// summary line. make test runs 3 rounds, make determinism 50.
func TestDeterminism(t *testing.T) {
	n := *rounds
	if env := os.Getenv(roundsEnv); n == 0 && env != "" {
		var err error
		if n, err = strconv.Atoi(env); err != nil || n < 0 {
			t.Fatalf("$%s=%q: want a whole number of rounds", roundsEnv, env)
		}
	}
	if n == 0 {
		t.Skip("set -determinism N or $" + roundsEnv + "=N to run the catalogue N times")
	}
	var mu sync.Mutex
	traces := map[string][]string{}
	failed := map[string]int{}
	opts := options(t, "")
	opts.Done = func(sc *harness.Scenario) {
		mu.Lock()
		defer mu.Unlock()
		tr := sc.Trace().Normalize()
		if harness.RanOnItsOwn(sc) {
			// A controller that runs on its own is woken by watch
			// events, whose timing the hooks do not order: its
			// assertions must hold on every run, its trace need not
			// be the same (docs/running.md).
			tr = "(ran on its own: assertions only)"
		}
		if rep := harness.Explored(sc); rep != nil {
			// An explore line's table and every interleaving's trace
			// must be the same on every run, moment for moment.
			tr += rep.Normalize()
		}
		traces[sc.Name] = append(traces[sc.Name], tr)
		if sc.Failed() {
			failed[sc.Name]++
		}
	}
	for i := 1; i <= n; i++ {
		t.Run(fmt.Sprintf("round-%d", i), func(t *testing.T) {
			testscript.Run(t, params(t, opts))
		})
	}

	names := make([]string, 0, len(traces))
	for name := range traces {
		names = append(names, name)
	}
	sort.Strings(names)
	failures, differences := 0, 0
	for _, name := range names {
		failures += failed[name]
		runs := traces[name]
		if len(runs) != n {
			t.Errorf("%s ran %d times, want %d", name, len(runs), n)
		}
		for i, tr := range runs[1:] {
			if diff := cmp.Diff(runs[0], tr); diff != "" {
				differences++
				t.Errorf("%s: the trace of run %d differs from run 1 (-run 1 +run %d):\n%s", name, i+2, i+2, diff)
			}
		}
	}
	summary := fmt.Sprintf("determinism: %d rounds of %d scenarios: %d failed runs, %d trace differences", n, len(names), failures, differences)
	fmt.Println(summary)
	if failures > 0 {
		t.Error(summary)
	}
}
