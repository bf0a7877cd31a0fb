package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness"
	"github.com/racekit/racekit/internal/assets"
)

// TestExploreShardsAsProcesses runs racekit explore as four processes at
// once, each with a control plane of its own: shards 1/3, 2/3 and 3/3 of
// the annotation scenario against blind-update, each writing its report
// with --json, and the whole exploration. Then racekit explore --merge
// joins the three reports, and its table must be the whole's, byte for
// byte, with the same exit status.
func TestExploreShardsAsProcesses(t *testing.T) {
	if _, err := assets.Find(); err != nil {
		t.Fatalf("%v", err) // racekit would build them, for minutes
	}
	built(t)
	dir := t.TempDir()
	args := []string{"explore", annotation, "--bug", "blind-update"}

	type proc struct {
		cmd            *exec.Cmd
		stdout, stderr bytes.Buffer
	}
	start := func(args ...string) *proc {
		p := &proc{cmd: exec.Command(bins.racekit, args...)}
		p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
		assert.NilError(t, p.cmd.Start())
		return p
	}
	wait := func(p *proc) int {
		var exit *exec.ExitError
		if err := p.cmd.Wait(); err != nil && !errors.As(err, &exit) {
			t.Fatalf("run %v: %v", p.cmd.Args, err)
		}
		return p.cmd.ProcessState.ExitCode()
	}

	const n = 3
	var shards []*proc
	var reports []string
	for i := 1; i <= n; i++ {
		report := filepath.Join(dir, "shard"+strconv.Itoa(i)+".json")
		reports = append(reports, report)
		shards = append(shards, start(append(args, "--shard", strconv.Itoa(i)+"/"+strconv.Itoa(n), "--json", report)...))
	}
	whole := start(args...)
	for _, p := range append(shards, whole) {
		// A shard with no failing run would exit 0, so the code is
		// checked against its report below, not here.
		if code := wait(p); code != exitOK && code != exitFail {
			t.Fatalf("%v exited %d:\n%s", p.cmd.Args, code, p.stderr.String())
		}
	}
	assert.Equal(t, whole.cmd.ProcessState.ExitCode(), exitFail, "stderr:\n%s", whole.stderr.String())
	assert.Assert(t, strings.HasPrefix(whole.stdout.String(), "explored reconcile webapps/web: 7 moments (5 equivalent left out), 7 interleavings at depth 1, 7 failed\n"), "stdout:\n%s\nstderr:\n%s", whole.stdout.String(), whole.stderr.String())

	ran := 0
	for i, p := range shards {
		rep, err := readReport(reports[i])
		assert.NilError(t, err, "stderr of shard %d:\n%s", i+1, p.stderr.String())
		assert.Equal(t, rep.Shard, strconv.Itoa(i+1)+"/3")
		assert.Equal(t, p.stdout.String(), rep.Table(), "shard %d's table is not its report's", i+1)
		wantCode := exitOK
		if len(rep.Failed()) > 0 {
			wantCode = exitFail
		}
		assert.Equal(t, p.cmd.ProcessState.ExitCode(), wantCode, "shard %d:\n%s", i+1, p.stdout.String())
		ran += len(rep.Interleavings)
	}
	assert.Equal(t, ran, 7, "the shards ran %d runs between them, not the whole's 7", ran)

	merged := start(append([]string{"explore", "--merge"}, reports...)...)
	assert.Equal(t, wait(merged), exitFail, "stderr:\n%s", merged.stderr.String())
	assert.Equal(t, merged.stderr.String(), "")
	assert.Equal(t, merged.stdout.String(), whole.stdout.String(), "the merged table is not the whole's")
}

// TestExploreMerge checks racekit explore --merge in-process, on reports
// the test writes, with no control plane: shards that cover every run are
// merged, in the order of the runs, into the table harness.Merge makes,
// with exit 1 when a run failed, and --json writes the merged report;
// reports that overlap, leave a run out, come from another exploration,
// or are no report are refused with exit 2 and the reason.
func TestExploreMerge(t *testing.T) {
	noBuild(t) // a control plane started by mistake fails with exit 1
	dir := t.TempDir()
	ms := []harness.Moment{
		{Point: "before", Actor: "controller", Verb: "get", Object: "webapps/web", Occ: 1},
		{Point: "after", Actor: "controller", Verb: "get", Object: "webapps/web", Occ: 1},
		{Point: "after", Actor: "controller", Verb: "update", Object: "deployments/web", Occ: 1},
	}
	il := func(i int, passed bool) harness.Interleaving {
		out := harness.Interleaving{Index: i, Name: ms[i].Name(), Passed: passed, Conflicts: i,
			Hooks: []harness.Hook{{Moment: ms[i], Interferer: "annotate bob deployments/web team=blue"}}}
		if !passed {
			out.Failure = "x.txtar:9: annotation deployments/web team=blue: annotation team is missing"
		}
		return out
	}
	report := func(file, shard string, ils ...harness.Interleaving) *harness.ExploreReport {
		return &harness.ExploreReport{File: file, Script: "9f86d081", Workload: "reconcile webapps/web", Interferers: []string{"annotate bob deployments/web team=blue"},
			Invariants: []string{"annotation deployments/web team=blue"}, Depth: 1, Moments: ms, Total: 3, Shard: shard, Interleavings: ils}
	}
	write := func(name string, rep *harness.ExploreReport) string {
		p := filepath.Join(dir, name)
		assert.NilError(t, writeJSON(p, rep))
		return p
	}
	writeRaw := func(name, data string) string {
		p := filepath.Join(dir, name)
		assert.NilError(t, os.WriteFile(p, []byte(data), 0o644))
		return p
	}
	s1 := write("s1.json", report("/a/x.txtar", "1/2", il(2, true), il(0, true)))
	s2 := write("s2.json", report("/a/x.txtar", "2/2", il(1, false)))
	s2pass := write("s2pass.json", report("/a/x.txtar", "2/2", il(1, true)))
	overlap := write("overlap.json", report("/a/x.txtar", "2/2", il(1, true), il(2, true)))
	other := write("other.json", report("/a/y.txtar", "2/2", il(1, true)))
	// Another script of the same name, in another folder, with other
	// invariants: its one run passed, but it is another exploration.
	sameName := report("/b/x.txtar", "2/2", il(1, true))
	sameName.Script, sameName.Invariants = "2c26b46b", []string{"field deployments/web spec.replicas 2"}
	sameNamePath := write("same-name.json", sameName)
	bug := report("/a/x.txtar", "2/2", il(1, true))
	bug.Variant = "blind-update"
	bugPath := write("bug.json", bug)
	old := report("/a/x.txtar", "2/2", il(1, true))
	old.Script = ""
	oldPath := write("old.json", old)
	notJSON := writeRaw("not.json", "explored reconcile webapps/web\n")
	empty := writeRaw("empty.json", "{}\n")
	unknown := writeRaw("unknown.json", `{"Workload": "reconcile webapps/web", "Total": 1, "Colour": "blue"}`)
	two := writeRaw("two.json", string(mustJSON(t, report("/a/x.txtar", "2/2", il(1, true))))+"{}\n")
	taken := writeRaw("taken.json", "mine\n")

	t.Run("merged", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			files    []string
			wantCode int
			want     []harness.Interleaving
		}{
			{"a run failed", []string{s2, s1}, exitFail, []harness.Interleaving{il(0, true), il(1, false), il(2, true)}},
			{"every run passed", []string{s1, s2pass}, exitOK, []harness.Interleaving{il(0, true), il(1, true), il(2, true)}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "merged.json")
				var stdout, stderr strings.Builder
				code := run(append([]string{"explore", "--merge", "--json", out}, tc.files...), &stdout, &stderr)
				assert.Equal(t, code, tc.wantCode, "stderr:\n%s", stderr.String())
				assert.Equal(t, stderr.String(), "")
				want := report("/a/x.txtar", "", tc.want...)
				assert.Equal(t, stdout.String(), want.Table())
				got, err := readReport(out)
				assert.NilError(t, err)
				assert.Equal(t, got.Table(), want.Table(), "--json wrote another report than the table shows")
				assert.Equal(t, got.Shard, "")
			})
		}
	})

	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no report", []string{"--merge"}, "racekit explore: --merge wants the JSON reports of the shards (racekit explore --shard I/N --json FILE), got none"},
		{"with --shard", []string{"--merge", "--shard", "1/2", s1, s2}, "racekit explore: --merge takes no --shard: the shards' reports say what they explored"},
		{"with --bug", []string{"--merge", s1, s2, "--bug", "blind-update"}, "racekit explore: --merge takes no --bug"},
		{"with --depth", []string{"--merge", "--depth", "2", s1, s2}, "racekit explore: --merge takes no --depth"},
		{"with --emit", []string{"--merge", "--emit", dir, s1, s2}, "racekit explore: --merge takes no --emit"},
		{"a missing report", []string{"--merge", s1, filepath.Join(dir, "nope.json")}, "racekit explore: --merge: open " + filepath.Join(dir, "nope.json") + ": no such file or directory"},
		{"not JSON", []string{"--merge", s1, notJSON}, "racekit explore: --merge: " + notJSON + " is no report of racekit explore --json: invalid character"},
		{"an empty object", []string{"--merge", s1, empty}, "racekit explore: --merge: " + empty + " is no report of racekit explore --json: it names no workload or no runs"},
		{"an unknown field", []string{"--merge", s1, unknown}, "racekit explore: --merge: " + unknown + ` is no report of racekit explore --json: json: unknown field "Colour"`},
		{"two values", []string{"--merge", s1, two}, "racekit explore: --merge: " + two + " is no report of racekit explore --json: more follows the report"},
		{"overlap", []string{"--merge", s1, overlap}, "racekit explore: --merge: merge: run after_controller_update_deployments_web_1st is in shard 1/2 and in shard 2/2"},
		{"a shard twice", []string{"--merge", s1, s1}, "racekit explore: --merge: merge: run after_controller_update_deployments_web_1st is in shard 1/2 and in shard 1/2"},
		{"a gap", []string{"--merge", s1}, "racekit explore: --merge: merge: the shards ran 2 of 3 runs; missing: 1"},
		{"another exploration", []string{"--merge", s1, other}, "racekit explore: --merge: merge: shard 2/2 is of another exploration than shard 1/2:\n  file: y.txtar, not x.txtar\n"},
		{"another script of the same name", []string{"--merge", s1, sameNamePath}, "racekit explore: --merge: merge: shard 2/2 is of another exploration than shard 1/2:\n  script (SHA-256): 2c26b46b, not 9f86d081\n  invariants: field deployments/web spec.replicas 2, not annotation deployments/web team=blue\n"},
		{"another teaching variant", []string{"--merge", s1, bugPath}, "racekit explore: --merge: merge: shard 2/2 is of another exploration than shard 1/2:\n  teaching variant: blind-update, not none (the production controller)\n"},
		{"a report without identity", []string{"--merge", s1, oldPath}, "racekit explore: --merge: merge: shard 2/2 names no script"},
		{"merge onto a file", []string{"--merge", "--json", taken, s1, s2}, "racekit explore: --json: " + taken + " exists already: racekit never overwrites a file, so remove it or name another"},
		{"merge with --html", []string{"--merge", "--html", filepath.Join(dir, "page.html"), s1, s2}, "racekit explore: --merge takes no --html: the page draws each run's trace, which the JSON reports leave out; give --html to the shards"},
		{"html onto a file", []string{annotation, "--html", taken}, "racekit explore: --html: " + taken + " exists already: racekit never overwrites a file"},
		{"shard onto a file", []string{annotation, "--shard", "1/2", "--json", taken}, "racekit explore: --json: " + taken + " exists already"},
		{"shard 0/3", []string{annotation, "--shard", "0/3"}, `racekit explore: bad --shard "0/3": want I/N with 1 ≤ I ≤ N, such as 1/3`},
		{"shard 4/3", []string{annotation, "--shard", "4/3"}, `racekit explore: bad --shard "4/3": want I/N with 1 ≤ I ≤ N`},
		{"shard 1/0", []string{annotation, "--shard", "1/0"}, `racekit explore: bad --shard "1/0"`},
		{"shard 2", []string{annotation, "--shard", "2"}, `racekit explore: bad --shard "2"`},
		{"shard a/b", []string{annotation, "--shard", "a/b"}, `racekit explore: bad --shard "a/b"`},
		{"shard 1/2/3", []string{annotation, "--shard", "1/2/3"}, `racekit explore: bad --shard "1/2/3"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			assert.Equal(t, run(append([]string{"explore"}, tc.args...), &stdout, &stderr), exitUsage, "stderr: %s", stderr.String())
			assert.Assert(t, strings.HasPrefix(stderr.String(), tc.wantErr), "stderr:\n%s", stderr.String())
			assert.Equal(t, stdout.String(), "")
		})
	}
	data, err := os.ReadFile(taken)
	assert.NilError(t, err)
	assert.Equal(t, string(data), "mine\n", "--json overwrote a file")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	assert.NilError(t, err)
	return data
}
