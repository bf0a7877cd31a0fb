package scenarios

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/racekit/racekit/controller/teaching"
	"github.com/racekit/racekit/harness"
)

// TestExploreFindsEveryVariant explores the catalogue's explore scenarios
// against each teaching variant until one interleaving fails, then turns
// that interleaving into a scenario of its own (the explore line replaced
// by the exact hook that broke it, as racekit explore --emit writes it) and
// checks that this regression scenario fails against the variant and
// passes against the production controller: a race explore finds becomes a
// deterministic one-file test. -short skips it.
func TestExploreFindsEveryVariant(t *testing.T) {
	if testing.Short() {
		t.Skip("explores the catalogue once per variant; skipped with -short")
	}
	// Plain checks: gotest.tools' assert package defines a -update flag
	// of its own, which this package's -update would collide with.
	files, err := filepath.Glob("explore_*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no explore scenarios: %v", err)
	}
	production := options(t, "")
	for _, v := range teaching.Names() {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			opts := options(t, v)
			var found *harness.Interleaving
			var from string
			for _, f := range files {
				rep, err := harness.Explore(context.Background(), cp, opts, f, harness.ExploreOptions{})
				if err != nil {
					continue // the variant may break the learning run: that is no finding
				}
				if failed := rep.Failed(); len(failed) > 0 {
					found, from = &failed[0], f
					break
				}
			}
			if found == nil {
				t.Fatalf("no explore scenario finds %s", v)
			}
			t.Logf("%s found by %s at %s: %s", v, from, found.Name, strings.SplitN(found.Failure, "\n", 2)[0])

			file := filepath.Join(t.TempDir(), strings.TrimSuffix(from, ".txtar")+"_"+found.Name+".txtar")
			if err := os.WriteFile(file, found.Script, 0o644); err != nil {
				t.Fatal(err)
			}
			run := func(opts harness.ScriptOptions) harness.Result {
				opts.Dir, opts.Files = "", []string{file}
				res := harness.RunFiles(context.Background(), cp, opts)
				if len(res) != 1 {
					t.Fatalf("%d results for one file", len(res))
				}
				return res[0]
			}
			bad := run(opts)
			if bad.Passed {
				t.Errorf("the regression scenario passed against %s:\n%s", v, bad.Log)
			}
			good := run(production)
			if !good.Passed {
				t.Errorf("the regression scenario failed against the production controller:\n%s", good.Log)
			}
		})
	}
}
