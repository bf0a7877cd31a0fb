package explore

import (
	"slices"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/txtar"

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
	// Auto explores explore auto lines (Options.Auto).
	Auto AutoFunc
	// Shrink shrinks explore auto findings' regression scenarios
	// (Options.Shrink).
	Shrink bool
	// Select, if set, runs only the runs whose names it accepts, in place
	// of what go test's -run and -skip select (Options.Select): a Ginkgo
	// spec plays one run of an exploration (racekit.Env.PlayRun), and a
	// Select that accepts none lists the runs after the learning run
	// alone (racekit.Setup.Runs). Selected says how, for the report.
	Select   func(name string) bool
	Selected string
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

// FileHasExploreLine reports whether the scenario in file has an explore
// line.
func FileHasExploreLine(file string) (bool, error) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		return false, err
	}
	return hasExploreLine(string(ar.Comment)), nil
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

// interferers returns the extension an interleaving's run adds: the
// failed action of a hook armed on one of lines (the interferers', at 1)
// is the interferer's own (a NotFound on a first reconcile), which the run
// reports and goes on from, so that the invariants judge it; the failure
// is kept, Tolerated, for judge and the report.
func interferers(lines []int) *language.Extension {
	return &language.Extension{
		Name: "interferers",
		Tolerate: func(_ *language.Scenario, f language.Failure) (string, bool) {
			_, line := language.SplitPos(f.Hook.Armed)
			return "an explore interferer's own action: the run goes on, and the invariants judge it", slices.Contains(lines, line)
		},
	}
}

// stopping returns exts with none that keeps a script going past an
// assertion that fails (language.Extension.KeepGoing): each interleaving
// stops at its first failure, whatever the run the explore line is in.
func stopping(exts []*language.Extension) []*language.Extension {
	out := make([]*language.Extension, len(exts))
	for i, e := range exts {
		if e.KeepGoing {
			c := *e
			c.KeepGoing = false
			e = &c
		}
		out[i] = e
	}
	return out
}
