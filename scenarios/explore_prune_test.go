package scenarios

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/racekit/racekit/controller/teaching"
	"github.com/racekit/racekit/harness"
)

// explorations are the explore scenarios the pruning test explores: the
// catalogue's, and those of testdata that are made to catch a wrong rule.
func explorations(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"explore_*.txtar", "testdata/explore_*.txtar"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no explore scenarios")
	}
	return files
}

// TestExplorePruningIsSound explores every catalogue exploration, and the
// testdata ones, with the equivalent moments left out and with every
// moment, against the production controller and each teaching variant,
// and requires that each run of the exhaustive exploration has the verdict
// of its twin in the pruned one: the run at the moment itself, or, for a
// moment left out, at the moment it is equivalent to. -short skips the
// variants.
func TestExplorePruningIsSound(t *testing.T) {
	variants := append([]string{""}, teaching.Names()...)
	if testing.Short() {
		variants = variants[:1]
	}
	files := explorations(t)
	for _, v := range variants {
		name := v
		if name == "" {
			name = "production"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			opts := options(t, v)
			for _, f := range files {
				pruned, perr := harness.Explore(context.Background(), cp, opts, f, harness.ExploreOptions{})
				whole, werr := harness.Explore(context.Background(), cp, opts, f, harness.ExploreOptions{Exhaustive: true})
				if (perr == nil) != (werr == nil) {
					t.Errorf("%s: pruned: %v; exhaustive: %v", f, perr, werr)
					continue
				}
				if perr != nil {
					continue // the variant breaks the learning run: both say so
				}
				checkTwins(t, f, pruned, whole)
			}
		})
	}
}

// TestExplorePruningIsSoundAtDepth2 does what TestExplorePruningIsSound
// does at depth 2, for the scenarios whose moments explore leaves out, and
// against the production controller and blind-update: a pair's twin has
// its first hook at the twin of its moment, and its second hook where it
// is. -short skips it.
func TestExplorePruningIsSoundAtDepth2(t *testing.T) {
	if testing.Short() {
		t.Skip("explores pairs of moments; skipped with -short")
	}
	for _, v := range []string{"", teaching.BlindUpdate} {
		t.Run("bug="+v, func(t *testing.T) {
			t.Parallel()
			opts := options(t, v)
			for _, f := range []string{"explore_annotation.txtar", "testdata/explore_armed_hook.txtar"} {
				pruned, err := harness.Explore(context.Background(), cp, opts, f, harness.ExploreOptions{Depth: 2})
				if err != nil {
					t.Fatal(err)
				}
				whole, err := harness.Explore(context.Background(), cp, opts, f, harness.ExploreOptions{Depth: 2, Exhaustive: true})
				if err != nil {
					t.Fatal(err)
				}
				if pruned.Equivalent == 0 || len(pruned.Interleavings) >= len(whole.Interleavings) {
					t.Errorf("%s: pruning left out nothing at depth 2 (%d moments left out, %d of %d runs)", f, pruned.Equivalent, len(pruned.Interleavings), len(whole.Interleavings))
				}
				checkTwins(t, f, pruned, whole)
			}
		})
	}
}

// checkTwins requires that every run of whole, the exhaustive exploration,
// has the verdict of its twin in pruned (harness.CheckPruning): at depth 2,
// the first hook moves to its twin, the second stays. The catalogue's
// explorations run nothing on its own, so none of their moments races.
func checkTwins(t *testing.T, file string, pruned, whole *harness.ExploreReport) {
	t.Helper()
	c := harness.CheckPruning(pruned, whole)
	for _, d := range c.Differences {
		t.Errorf("%s: %s", file, d)
	}
	if len(c.Racing) > 0 {
		t.Errorf("%s: %d runs at moments left out as racing, in a catalogue that runs nothing on its own", file, len(c.Racing))
	}
	if len(c.Differences) > 0 || len(c.Racing) > 0 {
		t.Logf("exhaustive:\n%s\npruned:\n%s", whole.Table(), pruned.Table())
	}
}

// TestExploreSeesArmedHooks explores a scenario whose hook, armed before
// the explore line, makes the moment before the controller's registration
// differ from the one after its read of the WebApp, though no call comes
// between them: explore must run it, and find it failing there alone.
func TestExploreSeesArmedHooks(t *testing.T) {
	rep, err := harness.Explore(context.Background(), cp, options(t, ""), "testdata/explore_armed_hook.txtar", harness.ExploreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const moment = "before controller create registrations/web 1st"
	found := false
	for _, il := range rep.Interleavings {
		switch at := il.Hooks[0].Trigger(); {
		case at == moment:
			found = true
			if !strings.HasPrefix(il.Failure, "explore_armed_hook.txtar:26: field configmaps/team data.team blue:") {
				t.Errorf("the run at %s: %s, want a failure at explore_armed_hook.txtar:26\n%s", moment, il.Failure, rep.Table())
			}
		case !il.Passed:
			t.Errorf("the run at %s failed: %s\n%s", at, il.Failure, rep.Table())
		}
	}
	if !found {
		t.Errorf("explore left out the moment %s, which fails:\n%s", moment, rep.Table())
	}
}

// TestExploreUnderGoTest runs an explore scenario whose lines before the
// explore line arm a hook as go test runs the catalogue: the hook fires in
// explore's runs, and the scenario that only explores runs none of those
// lines, so none of its own hooks is left unfired.
func TestExploreUnderGoTest(t *testing.T) {
	opts := options(t, "")
	opts.Dir, opts.Files = "", []string{"testdata/explore_on_before.txtar"}
	var mu sync.Mutex
	var explored *harness.ExploreReport
	ran := false
	opts.Done = func(sc *harness.Scenario) {
		mu.Lock()
		defer mu.Unlock()
		ran = true
		if r := harness.Explored(sc); r != nil {
			explored = r
		}
	}
	// testscript runs each file as a parallel subtest, which ends with
	// the group.
	t.Run("group", func(t *testing.T) { testscript.Run(t, params(t, opts)) })
	mu.Lock()
	defer mu.Unlock()
	switch {
	case !ran:
		// go test -run left the scenario out: its subject did not run.
		t.Skip("-run or -skip left out testdata/explore_on_before.txtar, whose exploration this test judges")
	case explored != nil && len(explored.Interleavings) == 0 && explored.Selected != "":
		t.Skipf("%s left out every run of the exploration this test judges", explored.Selected)
	case explored == nil || len(explored.Interleavings) == 0:
		t.Fatalf("the scenario explored nothing: %+v", explored)
	}
	for _, il := range explored.Interleavings {
		if !il.Passed {
			t.Errorf("%s: %s", il.Name, il.Failure)
		}
	}
}

// TestExploreInterfererFailsAlone explores a first reconcile with an
// interferer that scales the Deployment the reconcile creates: before the
// create, the scale gets NotFound. Those runs are n/a, not findings, against
// the production controller, which passes every other run.
func TestExploreInterfererFailsAlone(t *testing.T) {
	rep, err := harness.Explore(context.Background(), cp, options(t, ""), "testdata/explore_first_reconcile.txtar", harness.ExploreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	na := 0
	for _, il := range rep.Interleavings {
		switch {
		case il.NotApplicable:
			na++
			if !strings.HasPrefix(il.NotApplicableWhy, "interferer failed: ") || !strings.Contains(il.NotApplicableWhy, "not found") {
				t.Errorf("%s is n/a for another reason: %s", il.Name, il.NotApplicableWhy)
			}
		case !il.Passed:
			t.Errorf("%s failed: %s", il.Name, il.Failure)
		}
	}
	if na == 0 || na == len(rep.Interleavings) {
		t.Errorf("%d of %d runs are n/a; want those before the Deployment exists:\n%s", na, len(rep.Interleavings), rep.Table())
	}
	if len(rep.Failed()) != 0 {
		t.Errorf("findings against the production controller:\n%s", rep.Table())
	}
	data, err := os.ReadFile("testdata/explore_first_reconcile.txtar")
	if err != nil || !strings.Contains(string(data), "with scale alice deployments/web 3") {
		t.Fatalf("testdata/explore_first_reconcile.txtar scales no more: %v", err)
	}
}
