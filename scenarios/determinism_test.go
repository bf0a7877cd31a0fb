package scenarios

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/racekit/racekit/harness"
)

var rounds = flag.Int("determinism", 0, "run the whole catalogue this many times and compare the normalized traces of the runs")

// TestDeterminism runs every scenario -determinism times, each round in
// parallel as usual, and fails on any failed run and on any difference
// between the normalized traces of one scenario's runs. It ends with one
// summary line. make test runs 3 rounds, make determinism 50.
func TestDeterminism(t *testing.T) {
	if *rounds == 0 {
		t.Skip("set -determinism N to run the catalogue N times")
	}
	var mu sync.Mutex
	traces := map[string][]string{}
	failed := map[string]int{}
	opts := harness.ScriptOptions{Dir: ".", Done: func(sc *harness.Scenario) {
		mu.Lock()
		defer mu.Unlock()
		traces[sc.Name] = append(traces[sc.Name], sc.Trace().Normalize())
		if sc.Failed {
			failed[sc.Name]++
		}
	}}
	for i := 1; i <= *rounds; i++ {
		t.Run(fmt.Sprintf("round-%d", i), func(t *testing.T) {
			testscript.Run(t, harness.Params(context.Background(), cp, opts))
		})
	}

	names := make([]string, 0, len(traces))
	for n := range traces {
		names = append(names, n)
	}
	sort.Strings(names)
	failures, differences := 0, 0
	for _, n := range names {
		failures += failed[n]
		runs := traces[n]
		if len(runs) != *rounds {
			t.Errorf("%s ran %d times, want %d", n, len(runs), *rounds)
		}
		for i, tr := range runs[1:] {
			if diff := cmp.Diff(runs[0], tr); diff != "" {
				differences++
				t.Errorf("%s: the trace of run %d differs from run 1 (-run 1 +run %d):\n%s", n, i+2, i+2, diff)
			}
		}
	}
	summary := fmt.Sprintf("determinism: %d rounds of %d scenarios: %d failed runs, %d trace differences", *rounds, len(names), failures, differences)
	fmt.Println(summary)
	if failures > 0 {
		t.Error(summary)
	}
}
