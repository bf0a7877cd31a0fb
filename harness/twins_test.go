package harness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// TestFailingTwins runs the failing twins under testdata/false: for every
// assertion command the registry holds, at least one well-formed scenario
// in which its claim is false, which must fail at that claim with a message
// that names the property. It fails when an assertion has no twin, so that
// none can be registered without a case that proves it can fail.
func TestFailingTwins(t *testing.T) {
	var names []string
	c, opts := withRef(t)
	for _, c := range Commands(opts.Commands...) {
		if c.Group == "assert" {
			names = append(names, c.Name)
		}
	}
	assert.Assert(t, len(names) > 0)
	twins, err := FailingTwins("../testdata/false", names)
	if err != nil {
		t.Error(err)
	}
	for _, tw := range twins {
		t.Run(strings.TrimSuffix(filepath.Base(tw.File), ".txtar"), func(t *testing.T) {
			t.Parallel()
			assert.NilError(t, tw.Check(context.Background(), c, opts))
		})
	}
}

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

// TestTwinJudge checks the verdict on a twin's run: it must fail first at
// its claim, in its command, on something else than its arguments, with a
// message its want section matches.
func TestTwinJudge(t *testing.T) {
	tw := Twin{Command: "conflicts", File: "../testdata/false/conflicts_x.txtar", Line: 3, runs: true, Want: regexp.MustCompile(`saw 0 \(and #2 409 AlreadyExists`)}
	const claim = "FAIL: ../testdata/false/conflicts_x.txtar:3: conflicts setup create webapps/web 1: want 1 409 Conflict responses to setup create webapps/web on the wire, saw 0 (and #2 409 AlreadyExists, which is no conflict)\n"
	tests := []struct {
		name   string
		result Result
		want   string // a part of the error; "" for none
	}{
		{"fails at its claim", Result{Log: "> create webapp.yaml\n" + claim}, ""},
		{"passes", Result{Passed: true, Log: "PASS"}, "passed, but its claim at conflicts_x.txtar:3 is false"},
		{"fails before its claim", Result{Log: "FAIL: ../testdata/false/conflicts_x.txtar:2: create webapp.yaml: boom\n"}, "failed at conflicts_x.txtar:2, not at its claim conflicts_x.txtar:3"},
		{"fails later, at the end", Result{Log: claim + "FAIL: ../testdata/false/conflicts_x.txtar:2: hook 1 never fired\n"}, ""},
		{"fails in another command", Result{Log: "FAIL: ../testdata/false/conflicts_x.txtar:3: wire setup create webapps/web 409 1: saw 0\n"}, "but not in conflicts"},
		{"fails on its arguments", Result{Log: "FAIL: ../testdata/false/conflicts_x.txtar:3: conflicts setup create webapps/web x: bad count \"x\": want a whole number; usage: conflicts ACTOR VERB RESOURCE/NAME[/SUB] COUNT\n"}, "on its arguments"},
		{"fails for another reason", Result{Log: "FAIL: ../testdata/false/conflicts_x.txtar:3: conflicts setup create webapps/web 1: want 1 409 Conflict responses, saw 2\n"}, "does not match its want section"},
		{"fails without file:line", Result{Log: "FAIL: scenarios\n"}, "without naming file:line"},
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
