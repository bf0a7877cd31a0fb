package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/racekit/racekit/harness"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/internal/assets"
	"github.com/racekit/racekit/internal/mermaid"
)

// failingScenario fails on its last line, after the controller has made
// calls, so that its trace has rows.
const failingScenario = `# A scenario that fails on purpose.
create webapp.yaml
reconcile webapps/web
field deployments/web spec.replicas 7
-- webapp.yaml --
apiVersion: demo.racekit.dev/v1alpha1
kind: WebApp
metadata:
  name: web
spec:
  replicas: 1
  image: nginx
`

// TestTraceForTools runs racekit run --trace json and --trace mermaid as a
// tool would, as a process whose standard output is a pipe, for passing and
// failing runs, and parses what comes out of the pipe: with encoding/json,
// as exactly one JSON value, and with the real Mermaid parser. The PASS and
// FAIL lines must arrive on standard error instead.
func TestTraceForTools(t *testing.T) {
	if _, err := assets.Find(); err != nil {
		t.Fatalf("%v", err) // racekit would build them, for minutes
	}
	built(t)
	racekit := bins.racekit
	flagship := "../../scenarios/deployment_conflict.txtar"
	failing := filepath.Join(t.TempDir(), "failing.txtar")
	assert.NilError(t, os.WriteFile(failing, []byte(failingScenario), 0o644))

	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  []string // lines standard error must hold
		// For json: each scenario's name, whether it passed and, if not,
		// how its failure message starts after "FAIL: ", in order.
		want []scenarioJSON
	}{
		{"json, passing", []string{"--trace", "json"}, exitOK,
			[]string{"PASS deployment_conflict"}, []scenarioJSON{{Scenario: "deployment_conflict", Passed: true}}},
		{"json, one passing and one failing", []string{"--trace", "json", flagship, failing}, exitFail,
			[]string{"PASS deployment_conflict", "FAIL failing"},
			[]scenarioJSON{{Scenario: "deployment_conflict", Passed: true},
				{Scenario: "failing", Passed: false, Failure: failing + ":4: field deployments/web spec.replicas 7:"}}},
		{"mermaid, passing", []string{"--trace", "mermaid", flagship}, exitOK, []string{"PASS deployment_conflict"}, nil},
		{"mermaid, failing", []string{"--trace", "mermaid", failing}, exitFail, []string{"FAIL failing"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each run has a control plane of its own
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(racekit, append([]string{"run"}, tc.args...)...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatalf("run racekit: %v", err)
			}
			assert.Equal(t, cmd.ProcessState.ExitCode(), tc.wantCode, "stderr:\n%s", stderr.String())
			if tc.args[1] == "json" {
				checkJSON(t, stdout.Bytes(), tc.want)
			} else {
				checkMermaid(t, stdout.Bytes())
			}
			for _, want := range tc.wantErr {
				assert.Assert(t, strings.Contains(stderr.String(), want), "want %q on stderr:\n%s", want, stderr.String())
			}
		})
	}
}

// checkJSON parses out as exactly one JSON value, an array of scenarios,
// and checks their names and outcomes against want, that each has rows,
// and that a failed one says where and why, from its FAIL line on.
func checkJSON(t *testing.T, out []byte, want []scenarioJSON) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var got []scenarioJSON
	assert.NilError(t, dec.Decode(&got), "stdout is not JSON:\n%s", out)
	_, err := dec.Token()
	assert.Assert(t, errors.Is(err, io.EOF), "stdout holds more than one JSON value (%v):\n%s", err, out)
	assert.Equal(t, len(got), len(want), "stdout:\n%s", out)
	for i, s := range got {
		assert.Equal(t, s.Scenario, want[i].Scenario)
		assert.Equal(t, s.Passed, want[i].Passed)
		assert.Assert(t, len(s.Rows) > 0, "%s has no rows", s.Scenario)
		if s.Passed {
			assert.Equal(t, s.Failure, "", "%s passed", s.Scenario)
		} else {
			assert.Assert(t, strings.HasPrefix(s.Failure, "FAIL: "+want[i].Failure), "%s: failure %q does not start with the failing line", s.Scenario, s.Failure)
		}
	}
}

// checkMermaid parses out with the real Mermaid parser, as one sequence
// diagram.
func checkMermaid(t *testing.T, out []byte) {
	t.Helper()
	assert.Equal(t, bytes.Count(out, []byte("sequenceDiagram")), 1, "stdout:\n%s", out)
	f := filepath.Join(t.TempDir(), "trace.mmd")
	assert.NilError(t, os.WriteFile(f, out, 0o644))
	res, err := mermaid.Check("../..", f)
	assert.NilError(t, err, "stdout:\n%s", out)
	assert.Assert(t, strings.Contains(res, ": ok (sequence)"), "%s", res)
}

// TestFailure checks that the failure message of racekit run --trace json
// starts at the log's first FAIL line, so that it carries no timings.
func TestFailure(t *testing.T) {
	boom := harness.Failure{Kind: harness.FailCommand, File: "x.txtar", Line: 3, Command: "reconcile webapps/web", Message: "boom\n  detail"}
	unfired := harness.Failure{Kind: harness.FailUnfired, Command: "annotate bob deployments/web t=1", Message: "no matching call was made after it was armed",
		Hook: &harness.FailedHook{ID: 1, Trigger: "after controller get deployments/web 1st", Armed: "x.txtar:2"}}
	tests := []struct {
		name   string
		result harness.Result
		want   string
	}{
		{"from the values, not the log",
			harness.Result{Log: "# setup (0.031s)\n> reconcile webapps/web\nFAIL: elsewhere\n", Failures: []harness.Failure{boom}},
			"FAIL: x.txtar:3: reconcile webapps/web: boom\n  detail"},
		{"each failure, the end-of-script ones too", harness.Result{Failures: []harness.Failure{boom, unfired}},
			"FAIL: x.txtar:3: reconcile webapps/web: boom\n  detail\nFAIL: x.txtar:2: hook 1 (after controller get deployments/web 1st: annotate bob deployments/web t=1) never fired: no matching call was made after it was armed"},
		{"a file that could not be read: the log", harness.Result{Log: "FAIL: x.txtar: no script\n"}, "FAIL: x.txtar: no script"},
		{"FAIL only inside a line", harness.Result{Log: "# on FAIL: retry\n> x\n"}, "# on FAIL: retry\n> x"},
		{"no FAIL line: the whole log", harness.Result{Log: "# phase (0.01s)\nhook 1 never fired\n"}, "# phase (0.01s)\nhook 1 never fired"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.result.FailureText(), tc.want)
		})
	}
}
