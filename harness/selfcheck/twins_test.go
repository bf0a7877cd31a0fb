package selfcheck

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/language"
)

// TestFailingTwinsAreRequired checks what FailingTwins refuses: an
// assertion without a twin, and files that are no twin of one.
func TestFailingTwinsAreRequired(t *testing.T) {
	const good = "create webapp.yaml\nconflicts setup create webapps/web 1\n-- want --\nsaw 0\n"
	tests := []struct {
		name  string
		files map[string]string
		names []string
		want  string // a part of the error; "" for none
	}{
		{name: "a twin for each", files: map[string]string{"conflicts_x.txtar": good}, names: []string{"conflicts"}},
		{name: "an assertion without a twin", files: map[string]string{"conflicts_x.txtar": good}, names: []string{"conflicts", "wire"},
			want: "no failing twin for the assertion wire"},
		{name: "a file for no assertion", files: map[string]string{"conflicts_x.txtar": good, "conflict_y.txtar": good}, names: []string{"conflicts"},
			want: `conflict_y.txtar: the name does not start with an assertion command (COMMAND_WHY.txtar) (did you mean "conflicts"?)`},
		{name: "no want section", files: map[string]string{"conflicts.txtar": "conflicts setup create webapps/web 1\n"}, names: []string{"conflicts"},
			want: "conflicts.txtar: no want section"},
		{name: "no line of the command", files: map[string]string{"conflicts.txtar": "# conflicts setup create webapps/web 1\nwire setup create webapps/web 409 1\n-- want --\nx\n"}, names: []string{"conflicts"},
			want: "conflicts.txtar: no line runs conflicts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				assert.NilError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
			}
			_, err := FailingTwins(dir, tc.names)
			if tc.want == "" {
				assert.NilError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
			if strings.Contains(tc.want, "no failing twin") {
				assert.Assert(t, errors.Is(err, errNoTwin))
			}
		})
	}
}

// TestClaimLine checks which line of a twin is its claim: the last line
// that runs the command, or, for one that prints, the last check of what it
// printed.
func TestClaimLine(t *testing.T) {
	tests := []struct {
		name, script, command string
		line                  int
		runs                  bool
	}{
		{"the last of two", "create a.yaml\nfield webapps/web spec.replicas 1\nfield webapps/web spec.replicas 2\n", "field", 3, true},
		{"negated, with a comment after", "# phase\n! annotation webapps/web team # absent\n", "annotation", 2, true},
		{"not in a comment", "# field is false here\ncreate a.yaml\n", "field", 0, false},
		{"the cmp of what it printed", "trace\ncmp stdout trace.golden\n", "trace", 2, false},
		{"not the cmp of another command", "trace\ncreate a.yaml\ncmp stdout trace.golden\n", "trace", 1, true},
		{"a stdout check", "next w ADDED web\nstdout 'ADDED web'\n", "next", 2, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line, runs := claimLine(tc.script, tc.command)
			assert.Equal(t, line, tc.line)
			assert.Equal(t, runs, tc.runs)
		})
	}
}

// TestTwinJudge checks the verdict on a twin's run, read from its
// verdicts and failures: it must fail first at its claim, in its command,
// on something else than its arguments, with a message its want section
// matches.
func TestTwinJudge(t *testing.T) {
	tw := Twin{Command: "conflicts", File: "../testdata/false/conflicts_x.txtar", Line: 3, runs: true, Want: regexp.MustCompile(`saw 0 \(and #2 409 AlreadyExists`)}
	const file = "../testdata/false/conflicts_x.txtar"
	fail := func(line int, command, msg string, usage bool) language.Failure {
		return language.Failure{Kind: language.FailCommand, File: file, Line: line, Command: command, Message: msg, Usage: usage}
	}
	claim := fail(3, "conflicts setup create webapps/web 1", "want 1 409 Conflict responses to setup create webapps/web on the wire, saw 0 (and #2 409 AlreadyExists, which is no conflict)", false)
	run := func(fs ...language.Failure) language.Result {
		r := language.Result{Failures: fs}
		for _, f := range fs {
			r.Verdicts = append(r.Verdicts, f.Verdict())
		}
		return r
	}
	unfired := language.Failure{Kind: language.FailUnfired, Command: "bump bob webapps/web", Message: "no matching call", Hook: &language.FailedHook{ID: 1, Trigger: "after setup create webapps/web 1st", Armed: file + ":2"}}
	tests := []struct {
		name   string
		result language.Result
		want   string // a part of the error; "" for none
	}{
		{"fails at its claim", run(claim), ""},
		{"passes", language.Result{Passed: true, Log: "PASS"}, "passed, but its claim at conflicts_x.txtar:3 is false"},
		{"fails before its claim", run(fail(2, "create webapp.yaml", "boom", false)), "failed at conflicts_x.txtar:2, not at its claim conflicts_x.txtar:3"},
		{"fails later, at the end", run(claim, unfired), ""},
		{"fails in another command", run(fail(3, "wire setup create webapps/web 409 1", "saw 0", false)), "but not in conflicts"},
		{"fails on its arguments", run(fail(3, "conflicts setup create webapps/web x", `bad count "x": want a whole number; usage: conflicts ACTOR VERB RESOURCE/NAME[/SUB] COUNT`, true)), "on its arguments"},
		{"fails for another reason", run(fail(3, "conflicts setup create webapps/web 1", "want 1 409 Conflict responses, saw 2", false)), "does not match its want section"},
		{"fails without file:line", language.Result{Log: "FAIL: scenarios\n"}, "without naming file:line"},
		{"a command of testscript's own at its claim", language.Result{Log: "FAIL: " + file + ":3: saw 0 (and #2 409 AlreadyExists\n", Verdicts: []language.Verdict{{File: file, Line: 3, Kind: language.FailScript}}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tw.judge(tc.result)
			if tc.want == "" {
				assert.NilError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
