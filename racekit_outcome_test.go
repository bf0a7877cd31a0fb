package racekit_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/harness"
)

// result builds a Result as Play returns it, failing at the failures
// given.
func result(name string, fs ...harness.Failure) racekit.Result {
	var r racekit.Result
	r.Name, r.Passed, r.Failures = name, len(fs) == 0, fs
	return r
}

// fieldFailure is a failed field assertion, as a scenario's run reports it.
func fieldFailure(command, want, got string) harness.Failure {
	return harness.Failure{Kind: "command", File: "x.txtar", Line: 3, Command: command, Want: want, Got: got, Message: "(-want +got)"}
}

// TestCheck compares outcomes as values: pass or fail, at which command,
// having seen what.
func TestCheck(t *testing.T) {
	replicas := fieldFailure("field statefulsets/r-server spec.replicas 3", "3", "2")
	for _, tc := range []struct {
		name string
		r    racekit.Result
		want racekit.Want
		err  string
	}{
		{"passes", result("a"), racekit.Passes(), ""},
		{"passes, but failed", result("a", replicas), racekit.Passes(), "a failed, want it to pass"},
		{"fails, but passed", result("a"), racekit.FailsAt("field statefulsets/r-server spec.replicas 3"), "a passed, want it to fail at field"},
		{"fails at the command", result("a", replicas), racekit.FailsAt("field statefulsets/r-server spec.replicas 3"), ""},
		{"fails at the command's first arguments", result("a", replicas), racekit.FailsAt("field statefulsets/r-server spec.replicas"), ""},
		{"a prefix of a word is no match", result("a", replicas), racekit.FailsAt("field statefulsets/r-server spec.rep"), "not as it should"},
		{"saw what it must", result("a", replicas), racekit.FailsAt("field statefulsets/r-server spec.replicas 3").Saw("2"), ""},
		{"saw something else", result("a", replicas), racekit.FailsAt("field statefulsets/r-server spec.replicas 3").Saw("1"), "want it to fail at field statefulsets/r-server spec.replicas 3 saw 1; its failures:\n  x.txtar:3: field statefulsets/r-server spec.replicas 3 (want 3, got 2)"},
		{"another command", result("a", replicas), racekit.FailsAt("annotation statefulsets/r-server team=blue"), "not as it should"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkWant(t, tc.r, tc.want, tc.err) })
	}
}

// TestCheckExplored: an exploration must fail in exactly the runs named,
// each where it says; n/a runs do not count.
func TestCheckExplored(t *testing.T) {
	moment := harness.Moment{Point: "before", Actor: "rabbitmq", Verb: "update", Object: "rabbitmqclusters/r", Occ: 1}
	other := moment
	other.Point = "after"
	wire := fieldFailure("wire rabbitmq delete statefulsets/r-server 200 1", "1", "0")
	run := func(m harness.Moment, fs ...harness.Failure) harness.Interleaving {
		return harness.Interleaving{Hooks: []harness.Hook{{Moment: m, Interferer: "mark stale"}}, Passed: len(fs) == 0, Failures: fs, Failure: "x"}
	}
	explored := func(ils ...harness.Interleaving) racekit.Result {
		r := result("e", harness.Failure{Kind: "command", Command: "explore do x"})
		r.Explored = &harness.ExploreReport{Interleavings: ils}
		return r
	}
	finds := racekit.Finds(racekit.WantRun{Moment: "before rabbitmq update rabbitmqclusters/r 1st", Interferer: "mark stale",
		Fails: racekit.FailsAt("wire rabbitmq delete statefulsets/r-server 200 1")})
	na := run(other)
	na.Passed, na.NotApplicable = false, true
	for _, tc := range []struct {
		name string
		r    racekit.Result
		want racekit.Want
		err  string
	}{
		{"the one run", explored(run(moment, wire), run(other)), finds, ""},
		{"n/a does not count", explored(run(moment, wire), na), finds, ""},
		{"another run fails too", explored(run(moment, wire), run(other, wire)), finds, "the run at after rabbitmq update rabbitmqclusters/r 1st with mark stale failed, and no want names it"},
		{"the run passed", explored(run(moment), run(other)), finds, "did not fail, want it to fail at wire"},
		{"fails elsewhere", explored(run(moment, fieldFailure("field a/b c 1", "1", "2"))), finds, "not as it should"},
		{"no run may fail", explored(run(moment, wire)), racekit.Passes(), "no want names it"},
		{"an unexpected failure in full", explored(run(moment, wire), run(other, harness.Failure{Kind: "command", Command: "await kcm create pvcs/p 201",
			Message: "ran out of time: kcm made these calls:\n  get statefulsets/s 200"})), finds,
			"no want names it: x\n    await kcm create pvcs/p 201: ran out of time: kcm made these calls:\n        get statefulsets/s 200"},
		{"explored nothing", result("e", harness.Failure{Command: "explore"}), finds, "explored nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkWant(t, tc.r, tc.want, tc.err) })
	}
}

// checkWant requires that r.Check(want) passes when err is empty, and
// fails with a message holding err otherwise.
func checkWant(t *testing.T, r racekit.Result, want racekit.Want, err string) {
	t.Helper()
	got := r.Check(want)
	if err == "" {
		assert.NilError(t, got)
		return
	}
	assert.ErrorContains(t, got, err)
}

// TestParseWant reads a header's want, and refuses what it cannot read.
func TestParseWant(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "pass", want: "pass"},
		{in: " fail at field a/b c 1 ", want: "fail at field a/b c 1"},
		{in: "fail at field a/b c 1 saw 2", want: "fail at field a/b c 1 saw 2"},
		{in: "fail at ", err: "bad want"},
		{in: "fails", err: "bad want"},
	} {
		w, err := racekit.ParseWant(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err)
			continue
		}
		assert.NilError(t, err)
		assert.Equal(t, w.String(), tc.want)
	}
}

// recorder is a testing.TB that keeps what Expect reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()           {}
func (r *recorder) Error(args ...any) { r.errs = append(r.errs, fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestExpect: a table's want comes first, then the header's; a result
// nothing speaks for, and a want for a scenario that did not run, fail.
func TestExpect(t *testing.T) {
	pass := racekit.Passes()
	headed := result("headed")
	headed.Want = &pass
	rec := &recorder{}
	racekit.Expect(rec, []racekit.Result{result("a"), headed, result("silent")}, map[string]racekit.Want{"a": racekit.Passes(), "gone": racekit.Passes()})
	assert.DeepEqual(t, rec.errs, []string{
		"silent: nothing says what it must do: add it to the table, or a # want: line to its header",
		"gone did not run: want says what it must do",
	})
}

// TestHeaderWant: Play reads a scenario's # want: line, and refuses one it
// cannot read, naming file:line.
func TestHeaderWant(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("bad.txtar", "# a lesson\n# want: fails somehow\ncreate x.yaml\n")
	_, err := racekit.Play(racekit.Setup{Dir: dir})
	assert.ErrorContains(t, err, "bad.txtar:2: bad want \"fails somehow\"")
	assert.Assert(t, strings.Contains(err.Error(), "fail at COMMAND ARGS..."))
}
