package main

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/controller/race"
	"github.com/racekit/racekit/controller/teaching"
	"github.com/racekit/racekit/harness"
	"github.com/racekit/racekit/hooks"
)

// updating reports whether -update was given. gotest.tools, which the
// tests use, defines the flag for its own golden values; the generated docs
// follow the same flag.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestLanguageDoc keeps docs/scenario-language.md generated from the
// commands' usage data.
func TestLanguageDoc(t *testing.T) {
	const path = "../../docs/scenario-language.md"
	want := languageMarkdown()
	if updating() {
		assert.NilError(t, os.WriteFile(path, []byte(want), 0o644))
	}
	got, err := os.ReadFile(path)
	assert.NilError(t, err)
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Fatalf("%s is stale; run go test ./cmd/racekit -run TestLanguageDoc -update (-want +got):\n%s", path, diff)
	}
}

// TestSummariesFitOnALine holds racekit's own commands to a Summary of one
// line of at most harness.MaxSummary bytes, whatever else they say going
// in their Detail, and checks that racekit help scenario NAME shows each
// command's Detail (its Summary, when it has none) and refuses a name no
// command has.
func TestSummariesFitOnALine(t *testing.T) {
	for _, c := range harness.Commands(race.Commands()...) {
		if strings.HasPrefix(c.Name, "test-") {
			continue
		}
		assert.Assert(t, len(c.Summary) <= harness.MaxSummary && !strings.Contains(c.Summary, "\n"),
			"%s's Summary is %d bytes or more than a line: put the rest in its Detail", c.Name, len(c.Summary))
		var out, errOut strings.Builder
		assert.Equal(t, run([]string{"help", "scenario", c.Name}, &out, &errOut), exitOK)
		text := c.Summary
		if c.Detail != "" {
			text = c.Detail
		}
		assert.Equal(t, strings.Join(strings.Fields(out.String()), " "), strings.Join(strings.Fields(c.Name+" "+c.Args+notes(c)+" "+upper(text)+"."), " "))
	}
	var out, errOut strings.Builder
	assert.Equal(t, run([]string{"help", "scenario", "idel"}, &out, &errOut), exitUsage)
	assert.Equal(t, errOut.String(), "racekit help scenario: no scenario command \"idel\" (did you mean \"idle\"?)\n")
}

// TestHelpListsEverything checks that racekit help scenario names every
// command with its usage and summary, every hook point with its summary,
// and, on its Verbs line, exactly the verbs a trigger can name. The verbs
// are read from that line alone: most of them (get, create, update, ...)
// are command names too, so found anywhere else they would prove nothing.
func TestHelpListsEverything(t *testing.T) {
	var out, errOut strings.Builder
	assert.Equal(t, run([]string{"help", "scenario"}, &out, &errOut), exitOK)
	for _, c := range harness.Commands(race.Commands()...) {
		if strings.HasPrefix(c.Name, "test-") {
			continue
		}
		assert.Assert(t, strings.Contains(out.String(), c.Name+" "+c.Args), "help lacks the usage of %s", c.Name)
		assert.Assert(t, strings.Contains(out.String(), c.Summary), "help lacks the summary of %s", c.Name)
	}
	for _, p := range hooks.Points() {
		assert.Assert(t, strings.Contains(out.String(), p.Summary))
	}
	var verbs []string
	for _, line := range strings.Split(out.String(), "\n") {
		if list, ok := strings.CutPrefix(line, "Verbs: "); ok {
			verbs = strings.Split(list, ", ")
		}
	}
	assert.Assert(t, verbs != nil, "help has no Verbs: line")
	if diff := cmp.Diff(hooks.Verbs, verbs); diff != "" {
		t.Errorf("help's Verbs line lists other verbs than a trigger can name (-want +got):\n%s", diff)
	}
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		args []string
		want int
	}{
		{nil, exitUsage},
		{[]string{"nonsense"}, exitUsage},
		{[]string{"help"}, exitOK},
		{[]string{"run", "--bogus"}, exitUsage},
		{[]string{"run", "--trace", "svg"}, exitUsage},
		{[]string{"run", "no-such-file.txtar"}, exitUsage},
		{[]string{"run", "--list"}, exitOK},
		{[]string{"run", "--list-bugs"}, exitOK},
		{[]string{"run", "--bug", "stale-objet"}, exitUsage},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut strings.Builder
			assert.Equal(t, run(tc.args, &out, &errOut), tc.want, "stderr: %s", errOut.String())
		})
	}
}

// TestList checks that racekit run --list names each embedded scenario
// with the first line of its header comment.
func TestList(t *testing.T) {
	var out, errOut strings.Builder
	assert.Equal(t, run([]string{"run", "--list"}, &out, &errOut), exitOK)
	assert.Assert(t, strings.Contains(out.String(), "deployment_conflict"))
	assert.Assert(t, strings.Contains(out.String(), "The flagship race: two writers, one Deployment, and a real 409."))
}

// TestListBugs checks that racekit run --list-bugs names every teaching
// variant with its summary.
func TestListBugs(t *testing.T) {
	var out, errOut strings.Builder
	assert.Equal(t, run([]string{"run", "--list-bugs"}, &out, &errOut), exitOK)
	for _, v := range teaching.Variants() {
		assert.Assert(t, strings.Contains(out.String(), v.Name()+" "), "missing %s", v.Name())
		assert.Assert(t, strings.Contains(out.String(), v.Summary()), "missing the summary of %s", v.Name())
	}
	var errs strings.Builder
	assert.Equal(t, run([]string{"run", "--bug", "stale-objet"}, &out, &errs), exitUsage)
	assert.Assert(t, strings.Contains(errs.String(), "stale-object"), "no did-you-mean: %s", errs.String())
}
