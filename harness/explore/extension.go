package explore

import (
	"strings"
	"sync"

	"github.com/racekit/racekit/harness/language"
)

// state is what explore keeps for one scenario.
type state struct {
	mu sync.Mutex
	// exploring is set for a scenario with an explore line: its other
	// lines are the explorer's, run in each interleaving, not here.
	exploring bool
	// explored is what the scenario's explore line found.
	explored *Report
	// from is the last sequence number before an explore workload's
	// calls, noted by the learning run's marker.
	from int
}

var stateKey = language.NewKey("explore", func(*language.Scenario) *state { return &state{} })

// Settings are what a project sets of the explorations its scenarios run
// under go test (racekit.Setup): the explore line's own Options.
type Settings struct {
	// Parallel bounds the interleavings that run at once; 0 means
	// DefaultParallel.
	Parallel int
}

// Extension returns the extension of explore: the explore, with and
// explore-from lines, whose explorations run with s. A scenario with an
// explore line only explores: the lines before it run in each of
// explore's runs, not in the scenario itself, so that go test and racekit
// explore run the same lines.
func Extension(s Settings) *language.Extension {
	return &language.Extension{
		Name:     "explore",
		Commands: commandsWith(s),
		Setup: func(sc *language.Scenario, _ func(string, string)) error {
			if hasExploreLine(sc.Script()) {
				st := stateKey.Of(sc)
				st.mu.Lock()
				st.exploring = true
				st.mu.Unlock()
			}
			return nil
		},
		Skip: func(sc *language.Scenario, c *language.Command) bool {
			st := stateKey.Peek(sc)
			if st == nil || c.Name == "explore" {
				return false
			}
			st.mu.Lock()
			defer st.mu.Unlock()
			return st.exploring
		},
	}
}

// hasExploreLine reports whether script has an explore line.
func hasExploreLine(script string) bool {
	for _, line := range strings.Split(script, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "explore" {
			return true
		}
	}
	return false
}
