package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/controller/race"
	"github.com/racekit/racekit/controller/teaching"
	"github.com/racekit/racekit/harness"
	"github.com/racekit/racekit/internal/assets"
)

// annotation is the explore scenario the tests explore, and the README
// shows explored.
const annotation = "../../scenarios/explore_annotation.txtar"

// firstReconcile explores a first reconcile with an interferer that
// scales the Deployment it creates, which fails on its own before the
// create.
const firstReconcile = "../../scenarios/testdata/explore_first_reconcile.txtar"

// TestExploreBadInput checks that racekit explore refuses bad arguments and
// a FILE that is no explore scenario with exit code 2 and a message naming
// what is wrong (the file:line, for a bad line), before any control plane
// starts, and that --emit into a folder that holds a file writes nothing.
func TestExploreBadInput(t *testing.T) {
	noBuild(t) // a control plane started by mistake fails with exit 1
	dir := t.TempDir()
	write := func(name, script string) string {
		p := filepath.Join(dir, name)
		assert.NilError(t, os.WriteFile(p, []byte(script), 0o644))
		return p
	}
	noExplore := write("no_explore.txtar", "# No explore line.\nreconcile webapps/web\n")
	depth3 := write("depth3.txtar", "# Too deep.\nexplore depth=3 reconcile webapps/web\nwith annotate bob deployments/web team=blue\n")
	noWith := write("no_with.txtar", "# No interferer.\n\nexplore reconcile webapps/web\nfield deployments/web spec.replicas 2\n")
	assert.NilError(t, os.Mkdir(filepath.Join(dir, "other"), 0o755))
	sameName := write("other/explore_annotation.txtar", "# Another file of the annotation's name.\nexplore reconcile webapps/web\nwith annotate bob deployments/web team=blue\n")
	full := filepath.Join(dir, "full")
	assert.NilError(t, os.Mkdir(full, 0o755))
	keep := write("full/keep.txtar", "mine\n")

	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no file", []string{}, "racekit explore: want a FILE.txtar to explore, got none"},
		{"two files, --json", []string{annotation, noWith, "--json", filepath.Join(dir, "r.json")}, "racekit explore: --json writes one exploration's report, and 2 FILEs were given: explore one FILE with --json"},
		{"two files, --html", []string{"--html", filepath.Join(dir, "p.html"), annotation, noWith}, "racekit explore: --html draws one exploration's page, and 2 FILEs were given"},
		{"two files of one name, --emit", []string{annotation, sameName, "--emit", filepath.Join(dir, "found")}, "racekit explore: --emit names each regression scenario after its FILE, and " + annotation + " and " + sameName + " have one name"},
		{"two files, one bad", []string{annotation, noWith}, "racekit explore: no_with.txtar:3: explore has no with line"},
		{"two files, one missing", []string{annotation, "no-such.txtar"}, "racekit explore: no scenario file no-such.txtar"},
		{"depth 3", []string{annotation, "--depth", "3"}, "racekit explore: bad --depth 3: want 1 or 2"},
		{"depth 0", []string{"--depth=0", annotation}, "racekit explore: bad --depth 0: want 1 or 2"},
		{"unknown flag", []string{annotation, "--shards", "1/2"}, "racekit explore: flag provided but not defined: -shards"},
		{"unknown bug", []string{annotation, "--bug", "blind-updat"}, `racekit explore: --bug: unknown teaching variant "blind-updat" (did you mean "blind-update"?)`},
		{"missing file", []string{"no-such.txtar"}, "racekit explore: no scenario file no-such.txtar"},
		{"no explore line", []string{noExplore}, "racekit explore: no_explore.txtar: no explore line"},
		{"depth=3 in the file", []string{depth3}, `racekit explore: depth3.txtar:2: bad "depth=3": want depth=1 or depth=2`},
		{"no with line", []string{noWith}, "racekit explore: no_with.txtar:3: explore has no with line"},
		{"emit into a folder that holds a file", []string{annotation, "--emit", full}, "racekit explore: --emit: " + full + " holds keep.txtar already"},
		{"emit onto a file", []string{annotation, "--emit", keep}, "racekit explore: --emit: " + keep + " is not a folder to write scenarios into"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			assert.Equal(t, run(append([]string{"explore"}, tc.args...), &stdout, &stderr), exitUsage, "stderr: %s", stderr.String())
			assert.Assert(t, strings.HasPrefix(stderr.String(), tc.wantErr), "stderr:\n%s", stderr.String())
			assert.Equal(t, stdout.String(), "")
		})
	}
	entries, err := os.ReadDir(full)
	assert.NilError(t, err)
	assert.Equal(t, len(entries), 1, "--emit wrote into a folder that held a file")
	data, err := os.ReadFile(keep)
	assert.NilError(t, err)
	assert.Equal(t, string(data), "mine\n")
}

// TestExplore runs racekit explore in-process on one control plane, which
// every case shares: the annotation scenario passes against the production
// controller, and fails against blind-update, whose runs --emit writes as
// regression scenarios that fail against the variant and pass against the
// production controller, and whose --html page a browser shows
// (checkHTMLPage).
func TestExplore(t *testing.T) {
	if _, err := assets.Find(); err != nil {
		t.Fatalf("%v", err) // racekit would build them, for minutes
	}
	ctx := context.Background()
	cp, err := startControlPlane(ctx, io.Discard)
	assert.NilError(t, err)
	defer cp.Close()
	shared := func(context.Context, io.Writer) (*harness.ControlPlane, func(), error) {
		return cp, func() {}, nil
	}

	t.Run("production passes, every moment listed", func(t *testing.T) {
		var stdout, stderr strings.Builder
		assert.Equal(t, explore([]string{annotation}, &stdout, &stderr, shared), exitOK, "stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
		n, rows := table(t, stdout.String())
		assert.Assert(t, n > 0 && len(rows) == n, "the table has %d rows for %d moments:\n%s", len(rows), n, stdout.String())
		seen := map[string]bool{}
		for _, r := range rows {
			assert.Assert(t, !seen[r.moment], "moment %q listed twice:\n%s", r.moment, stdout.String())
			seen[r.moment] = true
			assert.Equal(t, r.outcome, "pass", "%s", stdout.String())
		}
		checkExcerpt(t, "docs/explore.md", stdout.String(), "racekit explore "+filepath.Base(annotation))
	})

	t.Run("blind-update fails, and --emit writes regression scenarios", func(t *testing.T) {
		emitDir := filepath.Join(t.TempDir(), "found")
		var stdout, stderr strings.Builder
		code := explore([]string{annotation, "--bug", teaching.BlindUpdate, "--emit", emitDir}, &stdout, &stderr, shared)
		assert.Equal(t, code, exitFail, "stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
		checkExcerpt(t, "README.md", stdout.String(), "racekit explore "+filepath.Base(annotation)+" --bug blind-update")

		_, rows := table(t, stdout.String())
		want := map[string]string{} // emitted file → the failure, after its file:line
		for _, r := range rows {
			if strings.HasPrefix(r.outcome, "FAIL ") {
				want["explore_annotation_"+momentName(r.moment)+".txtar"] = afterPos(strings.TrimPrefix(r.outcome, "FAIL "))
			}
		}
		assert.Assert(t, len(want) > 0, "blind-update failed no run:\n%s", stdout.String())
		files, err := filepath.Glob(filepath.Join(emitDir, "*.txtar"))
		assert.NilError(t, err)
		assert.Equal(t, len(files), len(want), "one regression scenario per failing run; stderr:\n%s", stderr.String())
		for _, f := range files {
			data, err := os.ReadFile(f)
			assert.NilError(t, err)
			ar := txtar.Parse(data)
			assert.Assert(t, !regexp.MustCompile(`(?m)^(explore|with) `).Match(ar.Comment), "%s still explores:\n%s", f, data)
			assert.Assert(t, regexp.MustCompile(`(?m)^#   on [^\n]+: annotate bob deployments/web team=blue\n`).Match(ar.Comment), "%s's header names no hook:\n%s", f, data)
			assert.Assert(t, regexp.MustCompile(`(?m)^on [^\n]+: annotate bob deployments/web team=blue\nreconcile webapps/web\n`).Match(ar.Comment), "%s arms no hook before the workload:\n%s", f, data)
			last := ar.Files[len(ar.Files)-1]
			assert.Assert(t, last.Name == harness.FoundTrace && strings.Contains(string(last.Data), "hook 1 fired"), "%s has no %s section with the hook's firing:\n%s", f, harness.FoundTrace, data)
		}

		// Each emitted scenario fails against the variant, on the line
		// explore found failing, and passes against the production
		// controller.
		for _, tc := range []struct {
			bug        teaching.Variant
			wantPassed bool
		}{{teaching.Variant{}, true}, {mustVariant(t, teaching.BlindUpdate), false}} {
			opts, err := race.Setup("", race.Options{Bug: tc.bug}).ScriptOptions()
			assert.NilError(t, err)
			opts.Files = files
			for _, r := range harness.RunFiles(ctx, cp, opts) {
				assert.Equal(t, r.Passed, tc.wantPassed, "%s against %q:\n%s", r.Name, tc.bug.Name(), r.Log)
				if !r.Passed {
					got := afterPos(strings.TrimPrefix(r.FailureText(), "FAIL: "))
					w := want[r.Name+".txtar"]
					assert.Assert(t, strings.HasPrefix(got, strings.SplitN(w, "\n", 2)[0]), "%s fails otherwise than explore found:\ngot:  %s\nwant: %s", r.Name, got, w)
				}
			}
		}
	})

	t.Run("--html draws a page a browser shows", func(t *testing.T) { checkHTMLPage(t, shared) })
	t.Run("an interferer that fails alone is n/a, and --emit writes nothing", func(t *testing.T) {
		emitDir := filepath.Join(t.TempDir(), "found")
		var stdout, stderr strings.Builder
		code := explore([]string{firstReconcile, "--emit", emitDir}, &stdout, &stderr, shared)
		assert.Equal(t, code, exitOK, "stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
		_, rows := table(t, stdout.String())
		na := 0
		for _, r := range rows {
			switch {
			case strings.HasPrefix(r.outcome, "n/a (interferer failed: ") && strings.Contains(r.outcome, "not found"):
				na++
			case r.outcome != "pass":
				t.Errorf("a run is neither a pass nor n/a: %s\n%s", r.outcome, stdout.String())
			}
		}
		assert.Assert(t, na > 0, "no run is n/a:\n%s", stdout.String())
		_, err := os.Stat(emitDir)
		assert.Assert(t, os.IsNotExist(err), "--emit wrote %s", emitDir)
		assert.Assert(t, strings.Contains(stderr.String(), "so --emit wrote nothing"), "stderr:\n%s", stderr.String())
	})

	t.Run("two interferers of the same first words: --emit writes every run", func(t *testing.T) {
		dir := t.TempDir()
		data, err := os.ReadFile(annotation)
		assert.NilError(t, err)
		two := strings.Replace(string(data), "with annotate bob deployments/web team=blue\n", "with annotate bob deployments/web team=blue\nwith annotate bob deployments/web tier=web\n", 1)
		file := filepath.Join(dir, "explore_two_annotations.txtar")
		assert.NilError(t, os.WriteFile(file, []byte(two), 0o644))
		emitDir := filepath.Join(dir, "found")
		var stdout, stderr strings.Builder
		code := explore([]string{file, "--bug", teaching.BlindUpdate, "--emit", emitDir}, &stdout, &stderr, shared)
		assert.Equal(t, code, exitFail, "stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
		_, rows := table(t, stdout.String())
		failed := 0
		for _, r := range rows {
			if strings.HasPrefix(r.outcome, "FAIL ") {
				failed++
			}
		}
		files, err := filepath.Glob(filepath.Join(emitDir, "*.txtar"))
		assert.NilError(t, err)
		assert.Assert(t, failed > 1)
		assert.Equal(t, len(files), failed, "one regression scenario per failing run; stderr:\n%s", stderr.String())
	})

	t.Run("several files, one table each", func(t *testing.T) {
		var stdout, stderr strings.Builder
		code := explore([]string{annotation, firstReconcile}, &stdout, &stderr, shared)
		assert.Equal(t, code, exitOK, "stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
		parts := strings.Split(stdout.String(), "\n\n")
		assert.Equal(t, len(parts), 2, "%s", stdout.String())
		for i, f := range []string{annotation, firstReconcile} {
			head, rest, _ := strings.Cut(parts[i], "\n")
			assert.Equal(t, head, "== "+f)
			table(t, rest)
		}
	})

	// Issue 28: refused after the learning run, an only= that keeps no
	// call is a file racekit cannot explore, as one refused before: exit 2.
	t.Run("an only= that matches no call is a usage error", func(t *testing.T) {
		data, err := os.ReadFile(annotation)
		assert.NilError(t, err)
		f := filepath.Join(t.TempDir(), "explore_only_typo.txtar")
		typo := strings.Replace(string(data), "explore reconcile webapps/web", "explore only=deployments/web only=deployments/wbe reconcile webapps/web", 1)
		assert.Assert(t, typo != string(data))
		assert.NilError(t, os.WriteFile(f, []byte(typo), 0o644))
		var stdout, stderr strings.Builder
		assert.Equal(t, explore([]string{f}, &stdout, &stderr, shared), exitUsage, "stderr:\n%s", stderr.String())
		line := 1 + strings.Count(typo[:strings.Index(typo, "explore only=")], "\n")
		want := fmt.Sprintf("racekit explore: explore_only_typo.txtar:%d: only=deployments/wbe matches no call of the workload \"reconcile webapps/web\"", line)
		assert.Assert(t, strings.HasPrefix(stderr.String(), want), "stderr:\n%s", stderr.String())
		assert.Equal(t, stdout.String(), "")
	})

	t.Run("the learning run fails", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "no_deployment.txtar")
		assert.NilError(t, os.WriteFile(f, []byte("# The script before the explore line fails.\nfield deployments/web spec.replicas 2\nexplore reconcile webapps/web\nwith annotate bob deployments/web team=blue\n"), 0o644))
		var stdout, stderr strings.Builder
		assert.Equal(t, explore([]string{f}, &stdout, &stderr, shared), exitFail, "stderr:\n%s", stderr.String())
		assert.Assert(t, strings.HasPrefix(stderr.String(), "racekit explore: the learning run failed"), "stderr:\n%s", stderr.String())
		assert.Equal(t, stdout.String(), "")
	})

	t.Run("explore auto: the table, --html and --emit show each finding's differences", func(t *testing.T) {
		// The teaching variant that removes its finalizer before it
		// deregisters, explored auto over a deletion: one finding, a
		// registry call the references made and the run did not.
		const diff = "delete by controller (204) registrations/web: 1 in the references, 0 here"
		page, emitDir := filepath.Join(t.TempDir(), "auto.html"), filepath.Join(t.TempDir(), "found")
		var stdout, stderr strings.Builder
		code := explore([]string{"../../testdata/auto/webapp_delete.txtar", "--bug", "finalizer-before-cleanup", "--html", page, "--emit", emitDir}, &stdout, &stderr, shared)
		assert.Equal(t, code, exitFail, "stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
		assert.Assert(t, strings.Contains(stdout.String(), "\n      "+diff+"\n"), "stdout:\n%s", stdout.String())
		html, err := os.ReadFile(page)
		assert.NilError(t, err)
		assert.Assert(t, strings.Contains(string(html), diff), "the page does not show %q", diff)
		files, err := filepath.Glob(filepath.Join(emitDir, "*.txtar"))
		assert.NilError(t, err)
		assert.Equal(t, len(files), 1, "stderr:\n%s", stderr.String())
		emitted, err := os.ReadFile(files[0])
		assert.NilError(t, err)
		for _, want := range []string{"#   " + diff + "\n", "\nwire controller delete registrations/web 204 1\n", "# Shrunk: "} {
			assert.Assert(t, strings.Contains(string(emitted), want), "no %q in the emitted scenario:\n%s", want, emitted)
		}
	})
}

// row is a row of racekit explore's table.
type row struct{ moment, outcome string }

// tableRow reads a row: the moment, the interferer and the 409s, then the
// outcome.
var tableRow = regexp.MustCompile(`^  (\S.*?)\s{2,}(\S.*?)\s+409s \d+  (.*)$`)

// table reads racekit explore's table: the count of moments its first line
// states, and its rows, without the lines that continue a failure.
func table(t *testing.T, out string) (int, []row) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	m := regexp.MustCompile(`^explored .*: (\d+) moments`).FindStringSubmatch(lines[0])
	assert.Assert(t, m != nil, "the table states no count of moments:\n%s", out)
	n, _ := strconv.Atoi(m[1])
	var rows []row
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "   ") {
			continue // a rule broken, under its failure
		}
		r := tableRow.FindStringSubmatch(l)
		assert.Assert(t, r != nil, "not a row of the table: %q", l)
		rows = append(rows, row{moment: r[1], outcome: r[3]})
	}
	return n, rows
}

// momentName is a moment as a file name: harness.Moment.Name's spelling.
func momentName(trigger string) string {
	return strings.Trim(regexp.MustCompile(`[^a-zA-Z0-9-]+`).ReplaceAllString(trigger, "_"), "_")
}

// afterPos returns a failure message without its leading FILE:LINE: .
func afterPos(s string) string {
	return regexp.MustCompile(`^\S*\.txtar:\d+: `).ReplaceAllString(s, "")
}

func mustVariant(t *testing.T, name string) teaching.Variant {
	t.Helper()
	v, err := teaching.Lookup(name)
	assert.NilError(t, err)
	return v
}

// checkExcerpt checks that the table doc (README.md, docs/explore.md)
// shows between its explore-excerpt markers is in out, the output of cmd.
func checkExcerpt(t *testing.T, doc, out, cmd string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../..", doc))
	assert.NilError(t, err)
	s := string(data)
	const begin, end = "<!-- explore-excerpt: begin -->\n```\n", "```\n<!-- explore-excerpt: end -->"
	i, j := strings.Index(s, begin), strings.Index(s, end)
	assert.Assert(t, i >= 0 && j > i, "%s lacks the explore-excerpt markers", doc)
	excerpt := trimLines(s[i+len(begin) : j])
	assert.Assert(t, strings.Contains(trimLines(out), excerpt),
		"%s's explore excerpt is not in the output of %s; update %s.\nexcerpt:\n%s\noutput:\n%s", doc, cmd, doc, excerpt, out)
}

// TestProgressLine checks the line racekit explore keeps up to date on a
// terminal, on a clock the test moves.
func TestProgressLine(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name                string
		elapsed             time.Duration
		done, total, failed int
		want                string
	}{
		{"no time yet: no rate", 0, 0, 7, 0, "\r\033[Kracekit explore: 0/7 interleavings, 0 failed"},
		{"under way", 2 * time.Second, 3, 7, 1, "\r\033[Kracekit explore: 3/7 interleavings, 1 failed, 1.5 per second"},
		{"done", 4 * time.Second, 7, 7, 7, "\r\033[Kracekit explore: 7/7 interleavings, 7 failed, 1.8 per second"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var w strings.Builder
			p := &progressLine{w: &w, now: func() time.Time { return start.Add(tc.elapsed) }, start: start}
			p.update(tc.done, tc.total, tc.failed)
			assert.Equal(t, w.String(), tc.want)
		})
	}
}

// TestWhereAt checks what an interrupted racekit explore says of how far it
// got: nothing before the first stage began, the stage and its runs done
// and failed, with runs that end once the process was interrupted left
// out (they failed because the control plane went), as are the stages
// they began, and nothing once the
// exploration has ended. Without a terminal, each stage is logged.
func TestWhereAt(t *testing.T) {
	var log strings.Builder
	stopped := false
	at := &whereAt{file: "x.txtar", log: &log, stopped: func() bool { return stopped }}
	assert.Equal(t, at.interrupted(), "interrupted before the exploration of x.txtar began")
	at.stage(harness.ExploreStageLearning, 1)
	at.stage("the plans", 29)
	at.progress(3, 29, 1)
	assert.Equal(t, at.interrupted(), "interrupted in the plans of x.txtar: 3 of 29 runs done, 1 failed; no report is written")
	stopped = true
	at.progress(9, 29, 7)
	assert.Equal(t, at.interrupted(), "interrupted in the plans of x.txtar: 3 of 29 runs done, 1 failed; no report is written")
	// The plans the interrupt failed end their stage, and the next
	// begins: the interrupt is still in the plans (make test saw
	// "interrupted in the reruns ... 0 of 21 runs done").
	at.stage("the reruns that confirm the findings", 21)
	assert.Equal(t, at.interrupted(), "interrupted in the plans of x.txtar: 3 of 29 runs done, 1 failed; no report is written")
	at.over()
	assert.Equal(t, at.interrupted(), "")
	assert.Equal(t, log.String(), "racekit explore: x.txtar: the plans (29 runs)\n")
}
