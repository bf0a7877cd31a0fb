package harness

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"
	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/language"
)

// TestScriptLines holds testscript to what racekit's table of a script's
// lines assumes of it, which no API of testscript's says (language's
// lines.go): how it names a script (two files of one base name, the second
// x#1; a .txt), which line runs each command (phases, blank lines and
// comments skipped, a line behind a condition that skipped it, two lines
// alike, a $VAR, quotes holding a #, a negated command), and where one of
// its own commands stopped the script (one of several after the last of
// racekit's; a skip). A go-internal release that did any of it otherwise
// fails here, under RunFiles and under go test alike, instead of moving
// every failure's file:line in silence.
func TestScriptLines(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, script string) string {
		file := filepath.Join(dir, rel)
		assert.NilError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		assert.NilError(t, os.WriteFile(file, []byte(script), 0o644))
		return file
	}
	lines := write("a/x.txtar", `# phase one
where one

where one
[!linux] where skipped
[linux] where on-linux
env X=two
# phase two
  where $X
where 'quoted # not a comment' # a comment
! where fails
-- where.txt --
where nothing: an archive file
`)
	stopped := write("b/x.txtar", `where first
exists f.txt
stdout 'never printed'
where never
-- f.txt --
x
`)
	skipped := write("c/y.txt", `where before
exists f.txt
skip 'for the test'
where never
-- f.txt --
x
`)
	var mu sync.Mutex
	seen := map[string][]string{}
	where := &language.Command{Name: "where", Args: "WORD", Group: "race", MinArgs: 1, MaxArgs: 4, Negation: language.NegSelf,
		Summary: "note where it runs, for TestScriptLines",
		Run: func(sc *language.Scenario, inv language.Invocation) error {
			mu.Lock()
			defer mu.Unlock()
			seen[sc.Name] = append(seen[sc.Name], inv.Pos)
			return nil
		}}
	c, opts := withRef(t)
	opts.Commands = append(opts.Commands, where)
	lo, err := opts.Language()
	assert.NilError(t, err)

	wantLines := []string{lines + ":2", lines + ":4", lines + ":6", lines + ":9", lines + ":10", lines + ":11"}
	lo.Files = []string{lines, stopped, skipped}
	res := language.RunFiles(context.Background(), c, lo)
	var names []string
	verdicts := map[string][]string{}
	for _, r := range res {
		names = append(names, r.Name)
		for _, v := range r.Verdicts {
			if !v.Passed {
				verdicts[r.Name] = append(verdicts[r.Name], v.File+" "+v.Key())
			}
		}
	}
	assert.DeepEqual(t, names, []string{"x", "x#1", "y"})
	want := map[string][]string{"x": wantLines, "x#1": {stopped + ":1"}, "y": {skipped + ":1"}}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("the lines each where ran at under RunFiles (-want +got):\n%s", diff)
	}
	wantVerdicts := map[string][]string{
		"x#1": {stopped + " x.txtar:3 (a command of testscript's own): FAIL (script)"},
		"y":   {skipped + " y.txt:3 (a command of testscript's own): FAIL (script)"},
	}
	if diff := cmp.Diff(wantVerdicts, verdicts); diff != "" {
		t.Errorf("where testscript's own commands stopped the scripts (-want +got):\n%s", diff)
	}

	clear(seen)
	lo.Files = []string{lines}
	ran := false
	t.Run("go test", func(t *testing.T) {
		ran = true
		params, err := language.Params(context.Background(), c, lo)
		assert.NilError(t, err)
		testscript.Run(t, params)
	})
	if !ran {
		t.Skip("-run or -skip left out its subtest go test, whose lines this test judges")
	}
	if diff := cmp.Diff(map[string][]string{"x": wantLines}, seen); diff != "" {
		t.Errorf("the lines each where ran at under go test (-want +got):\n%s", diff)
	}
}
