package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness"
)

// TestExploreShowsRacing checks, on a report the test makes, that a moment
// left out as racing with a controller that runs on its own is shown per
// moment, with the watcher it races with, wherever the report goes: a row
// of the table, the JSON report's Racing (read back as written), and the
// --html page's list and its note in the workload's diagram.
func TestExploreShowsRacing(t *testing.T) {
	create := harness.Row{Seq: 4, Actor: "setup", Verb: "create", Object: "configmaps/job", Code: 201, Reason: "Created", GotRV: "rv1"}
	before := harness.Moment{Point: "before", Actor: "setup", Verb: "create", Object: "configmaps/job", Occ: 1}
	after := before
	after.Point = "after"
	rep := &harness.ExploreReport{File: "x.txtar", Script: "9f86d081", Workload: "create job.yaml", Interferers: []string{"crash mover"}, Depth: 1,
		Moments: []harness.Moment{before}, Total: 1, Learning: []harness.Row{create},
		Racing:        []harness.Race{{Moment: after, Watchers: []harness.Watcher{{Name: "mover", Actor: "controller", Watch: "configmaps"}, {Name: "pw", Actor: "pw", Watch: "configmaps/job"}}}},
		Interleavings: []harness.Interleaving{{Name: before.Name(), Passed: true, Hooks: []harness.Hook{{Moment: before, Interferer: "crash mover"}}}}}
	const why = "left out: races mover (as controller), which watches configmaps; and pw, which watches configmaps/job"

	table := rep.Table()
	assert.Equal(t, table, "explored create job.yaml: 1 moments (0 equivalent left out, 1 racing a controller that runs on its own), 1 interleavings at depth 1, 0 failed\n"+
		"  before setup create configmaps/job 1st           crash mover                              409s 0  pass\n"+
		"  after setup create configmaps/job 1st            "+why+"\n")

	dir := t.TempDir()
	js := filepath.Join(dir, "r.json")
	assert.NilError(t, writeJSON(js, rep))
	back, err := readReport(js)
	assert.NilError(t, err)
	assert.DeepEqual(t, back.Racing, rep.Racing)
	data, err := os.ReadFile(js)
	assert.NilError(t, err)
	assert.Assert(t, strings.Contains(string(data), `"Watchers": [`), "the JSON report names no watcher:\n%s", data)

	page := filepath.Join(dir, "p.html")
	assert.NilError(t, writeHTML(page, rep, nil))
	html, err := os.ReadFile(page)
	assert.NilError(t, err)
	item := `<li class="racing">after setup create configmaps/job 1st · ` + why + `</li>`
	assert.Assert(t, strings.Contains(string(html), item), "the page lists no racing moment %q", item)

	got := rep.MarkedDiagram()
	want := strings.Join([]string{
		"sequenceDiagram",
		"    participant setup",
		"    participant kube_apiserver as kube-apiserver",
		"    rect rgb(200, 230, 201)",
		"    Note over setup: before setup create configmaps/job 1st#58; pass",
		"    end",
		"    setup->>kube_apiserver: 4. create configmaps/job",
		"    kube_apiserver-->>setup: 201 Created rv1",
		"    rect rgb(255, 236, 179)",
		"    Note over setup: after setup create configmaps/job 1st#58; " + diagramText(why),
		"    end",
	}, "\n") + "\n"
	assert.Equal(t, got, want, cmp.Diff(want, got))
}

// diagramText escapes what Mermaid's sequence grammar gives a meaning to,
// as the diagrams do.
func diagramText(s string) string {
	return strings.NewReplacer(";", "#59;", "#", "#35;", ":", "#58;", "\n", " ").Replace(s)
}
