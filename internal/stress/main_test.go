package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
)

// TestGoTestArgs checks that the race flag stands alone and -timeout keeps
// its value: once, the flag went between -timeout and 60m, every suite
// failed to start, and stress passed over 0 tests. A suite that make test
// runs without the race flag runs without it here too.
func TestGoTestArgs(t *testing.T) {
	racing := suite{".", []string{"./harness", "-run", "TestPorts"}, true}
	plain := suite{"realbugs", []string{"./..."}, false}
	for _, tc := range []struct {
		race string
		s    suite
		want []string
	}{
		{"", racing, []string{"test", "-json", "-count=1", "-timeout", "60m", "./harness", "-run", "TestPorts"}},
		{"-race", racing, []string{"test", "-json", "-count=1", "-timeout", "60m", "-race", "./harness", "-run", "TestPorts"}},
		{"-race", plain, []string{"test", "-json", "-count=1", "-timeout", "60m", "./..."}},
	} {
		if d := cmp.Diff(tc.want, goTestArgs(tc.race, tc.s)); d != "" {
			t.Errorf("race %q, %v (-want +got):\n%s", tc.race, tc.s.args, d)
		}
	}
}

// exit returns the error of a process that exits with code.
func exit(t *testing.T, code string) error {
	t.Helper()
	err := exec.Command("sh", "-c", "exit "+code).Run()
	assert.Assert(t, err != nil)
	return err
}

// TestRan checks which ends of go test are a suite's verdicts and which
// are an error: no verdict, a failure with no failing test, an exit other
// than 1.
func TestRan(t *testing.T) {
	s := suite{"examples", []string{"./..."}, false}
	pass := map[string]string{"p TestA": "pass"}
	fail := map[string]string{"p TestA": "pass", "p TestB": "fail"}
	for _, tc := range []struct {
		name     string
		verdicts map[string]string
		err      error
		want     string // a part of the error; "" for none
	}{
		{"all passed", pass, nil, ""},
		{"a test failed", fail, exit(t, "1"), ""},
		{"no verdict", map[string]string{}, exit(t, "2"), "go test ./... (in examples) gave no verdict"},
		{"no verdict, exit 0", nil, nil, "gave no verdict"},
		{"exit 1, nothing failed", pass, exit(t, "1"), "failed with no failing test"},
		{"exit 2", fail, exit(t, "2"), "exit status 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ran(s, tc.verdicts, tc.err)
			if tc.want == "" {
				assert.NilError(t, err)
				return
			}
			assert.Assert(t, err != nil && strings.Contains(err.Error(), tc.want), "got %v, want %q", err, tc.want)
		})
	}
}

// TestReadVerdicts checks that a test's verdict is its last and that its
// output is kept for printFailures, by package and test.
func TestReadVerdicts(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"a.go:3: want 1, got 2\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestA"}`,
		`not json: a line of the build's`,
		`{"Action":"pass","Package":"p","Test":"TestB"}`,
		`{"Action":"fail","Package":"p"}`,
	}, "\n")
	verdicts, outputs := map[string]string{}, map[string][]string{}
	assert.NilError(t, readVerdicts(strings.NewReader(in), verdicts, outputs))
	if d := cmp.Diff(map[string]string{"p TestA": "fail", "p TestB": "pass", "p": "fail"}, verdicts); d != "" {
		t.Errorf("verdicts (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string][]string{"p TestA": {"a.go:3: want 1, got 2\n"}}, outputs); d != "" {
		t.Errorf("outputs (-want +got):\n%s", d)
	}
}

// TestLogFile checks the names of the loads' logs.
func TestLogFile(t *testing.T) {
	for in, want := range map[string]string{
		"quiet":             "stress-logs/quiet.json",
		"busy, round 1":     "stress-logs/busy-round-1.json",
		"one core, round 2": "stress-logs/one-core-round-2.json",
	} {
		assert.Equal(t, logFile(in), want)
	}
}
