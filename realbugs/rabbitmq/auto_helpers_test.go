package rabbitmq_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/realbugs/rabbitmq"
)

// exploreOne plays dir, which must hold one explore auto scenario, against
// r, logs its table and returns its report. It fails t when an operator
// was settled by a quiet period in any run: the rabbitmq scenarios spawn
// it with its metrics on, so that idle settles it by its workqueues.
func exploreOne(t *testing.T, dir string, r rabbitmq.Release) *racekit.ExploreReport {
	t.Helper()
	results, err := racekit.Play(setup(t, dir, r))
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || results[0].Explored == nil || results[0].Explored.Auto == nil {
		t.Fatalf("want one explore auto scenario, got %d results", len(results))
	}
	rep := results[0].Explored
	t.Log(rep.Table())
	if a := rep.Auto; len(a.Clock) > 0 {
		t.Errorf("idle settled %v by a quiet period in %d runs, want every run settled by its workqueues", a.Clock, a.ClockRuns)
	}
	return rep
}

// on is what the regression scenario of a finding must do against a
// release.
type on struct {
	release rabbitmq.Release
	want    racekit.Want
}

// playEmitted writes the regression scenario explore auto emitted for il
// as name.txtar and plays it against each release of wants, as the want
// there says: fail at the claim the bug breaks where the bug is, pass
// where it was fixed.
func playEmitted(t *testing.T, il racekit.Interleaving, name string, wants ...on) {
	t.Helper()
	if len(il.Emit) == 0 {
		t.Errorf("no regression scenario emitted for %s", il.Name)
		return
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name+".txtar"), il.Emit, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, w := range wants {
		results, err := racekit.Play(setup(t, dir, w.release))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s's emitted scenario against %s", il.Name, w.release.Version)
		racekit.Expect(t, results, map[string]racekit.Want{name: w.want})
	}
}
