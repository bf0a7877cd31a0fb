package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// These tests run racekit, and the harness's test binary, as real processes
// with a TMPDIR of their own, and check that when each has exited no
// kube-apiserver or etcd started from that TMPDIR is alive and nothing is
// left in it: after a passing run, a failing scenario, a panic inside a
// scenario command, an interrupt (SIGINT) to racekit run and to go test,
// the end of a fuzzing run, and a fuzzing worker that crashes.

var (
	buildOnce sync.Once
	buildErr  error
	binDir    string
)

// build compiles what the tests run, once per package run.
func build(t *testing.T) (racekit, harnessTest string) {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "racekit-leak-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binDir = dir
		for _, args := range [][]string{
			{"build", "-o", filepath.Join(dir, "racekit"), "."},
			{"test", "-c", "-o", filepath.Join(dir, "harness.test"), "../../harness"},
		} {
			if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
				buildErr = errors.New(string(out))
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatalf("build: %v", buildErr)
	}
	return filepath.Join(binDir, "racekit"), filepath.Join(binDir, "harness.test")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// leftovers returns what a process run with tmp as TMPDIR left behind: live
// processes whose command line names tmp, and entries in tmp.
func leftovers(t *testing.T, tmp string) (procs, files []string) {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	assert.NilError(t, err)
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(tmp)) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			continue // exited, waiting to be reaped: not running
		}
		procs = append(procs, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	left, err := os.ReadDir(tmp)
	assert.NilError(t, err)
	for _, e := range left {
		files = append(files, e.Name())
	}
	return procs, files
}

// start runs bin with args and its own TMPDIR, in a process group of its
// own as a terminal would, and returns the command and a reader of its
// combined output.
func start(t *testing.T, bin, dir string, env []string, args ...string) (*exec.Cmd, *bufio.Reader, string) {
	t.Helper()
	tmp := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "TMPDIR="+tmp), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	assert.NilError(t, cmd.Start())
	go func() { cmd.Wait(); pw.Close() }()
	return cmd, bufio.NewReader(pr), tmp
}

// readUntil reads r until a line contains want, and fails if r ends first.
func readUntil(t *testing.T, r *bufio.Reader, want string) string {
	t.Helper()
	var seen strings.Builder
	for {
		line, err := r.ReadString('\n')
		seen.WriteString(line)
		if strings.Contains(line, want) {
			return seen.String()
		}
		if err != nil {
			t.Fatalf("output ended before %q:\n%s", want, seen.String())
		}
	}
}

// status returns how cmd ended, as "exit status 1" or "signal: interrupt".
// The output reaching EOF, which callers wait for, means Wait has returned.
func status(cmd *exec.Cmd) string {
	if cmd.ProcessState == nil {
		return "still running"
	}
	return cmd.ProcessState.String()
}

func TestNoLeaks(t *testing.T) {
	racekit, harnessTest := build(t)
	failing := filepath.Join(t.TempDir(), "failing.txtar")
	assert.NilError(t, os.WriteFile(failing, []byte(`# A scenario that fails on purpose.
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
`), 0o644))

	// A short fuzzing run, as make fuzz runs it, through go test, which
	// builds the coverage instrumentation in: one worker, and a few
	// executions past the seed corpus. A corpus cache of its own keeps the
	// user's out of it.
	fuzz := []string{"test", "-run", "^$", "-fuzz", "FuzzScript$", "-fuzztime", "70x", "-parallel", "1",
		"-fuzzminimizetime", "1x", "-args", "-test.fuzzcachedir=" + t.TempDir()}

	// An interrupted process dies by the signal, after its cleanup, so that
	// its parent knows it was interrupted: a shell reports status 130.
	tests := []struct {
		name       string
		bin        string
		dir        string // the folder to run in; the harness's tests read ../testdata
		env        []string
		args       []string
		signalAt   string // interrupt once this is printed
		wantOut    string
		wantStatus string
		readme     bool          // the output must contain the README's demo excerpt
		alsoOut    []string      // more that the output must contain
		bound      time.Duration // if set, how long the run may take before it counts as hung
	}{
		{name: "passing run", bin: racekit, args: []string{"run", "-v"}, wantOut: "PASS deployment_conflict", wantStatus: "exit status 0", readme: true},
		{name: "failing scenario", bin: racekit, args: []string{"run", failing}, wantOut: "FAIL failing", wantStatus: "exit status 1",
			// The failure shows the go-cmp diff and the timeline rows.
			alsoOut: []string{"field deployments/web spec.replicas 7", "(-want +got)", "\"7\",", "\"1\",", "ACTOR", "controller  create deployments/web"}},
		{name: "panic in a scenario command", bin: harnessTest, dir: "../../harness", args: []string{"-test.run", "TestBadInput/command_panics", "-test.v"},
			wantOut: "--- PASS: TestBadInput/command_panics", wantStatus: "exit status 0"},
		{name: "SIGINT to racekit run", bin: racekit, args: []string{"run"}, signalAt: "starting the control plane",
			wantOut: "stopping the control plane", wantStatus: "signal: interrupt"},
		{name: "SIGINT to go test", bin: harnessTest, dir: "../../harness", env: []string{"RACEKIT_SIGNAL_TARGET=1"}, args: []string{"-test.run", "TestSignalTarget$", "-test.v"},
			signalAt: "ready", wantOut: "stopping the control plane", wantStatus: "signal: interrupt"},
		// The fuzzing coordinator stops each worker, and each worker its
		// control plane, once -fuzztime is spent; the run must then return.
		{name: "fuzzing run", bin: "go", dir: "../../harness", args: fuzz,
			wantOut: "PASS", wantStatus: "exit status 0", alsoOut: []string{"now fuzzing with 1 workers"}, bound: 3 * time.Minute},
		// A worker that crashes cannot stop its control plane; the
		// coordinator adopts the orphans and ends them after the run.
		{name: "fuzzing worker crashes", bin: "go", dir: "../../harness", env: []string{"RACEKIT_FUZZ_CRASH=1"}, args: fuzz,
			wantOut: "fuzzing process hung or terminated unexpectedly: exit status 3", wantStatus: "exit status 1", bound: 3 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd, out, tmp := start(t, tc.bin, tc.dir, tc.env, tc.args...)
			var hung atomic.Bool
			if tc.bound > 0 {
				// A guard against a hang, not a speed target: the run
				// takes a fraction of the bound.
				guard := time.AfterFunc(tc.bound, func() {
					hung.Store(true)
					_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				})
				defer guard.Stop()
			}
			var seen string
			if tc.signalAt != "" {
				seen = readUntil(t, out, tc.signalAt)
				assert.NilError(t, cmd.Process.Signal(os.Interrupt))
			}
			rest, _ := io.ReadAll(out) // until the process has exited
			seen += string(rest)
			if hung.Load() {
				procs, _ := leftovers(t, tmp)
				t.Fatalf("still running after %v: killed it; left running:\n%s\noutput:\n%s", tc.bound, strings.Join(procs, "\n"), seen)
			}
			assert.Assert(t, strings.Contains(seen, tc.wantOut), "want %q in the output:\n%s", tc.wantOut, seen)
			assert.Equal(t, status(cmd), tc.wantStatus, "output:\n%s", seen)
			for _, want := range tc.alsoOut {
				assert.Assert(t, strings.Contains(seen, want), "want %q in the output:\n%s", want, seen)
			}
			if tc.readme {
				excerpt := readmeExcerpt(t)
				assert.Assert(t, strings.Contains(trimLines(seen), excerpt), "the README's demo excerpt is not in the output of racekit run -v; update README.md.\nexcerpt:\n%s\noutput:\n%s", excerpt, seen)
			}
			procs, files := leftovers(t, tmp)
			assert.Assert(t, len(procs) == 0, "processes left running:\n%s", strings.Join(procs, "\n"))
			assert.Assert(t, len(files) == 0, "left in TMPDIR: %v", files)
		})
	}
}

// readmeExcerpt returns the timeline excerpt the README shows, between its
// demo-excerpt markers.
func readmeExcerpt(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	assert.NilError(t, err)
	s := string(data)
	const begin, end = "<!-- demo-excerpt: begin -->\n```\n", "```\n<!-- demo-excerpt: end -->"
	i, j := strings.Index(s, begin), strings.Index(s, end)
	assert.Assert(t, i >= 0 && j > i, "README.md lacks the demo-excerpt markers")
	return trimLines(s[i+len(begin) : j])
}

// trimLines drops trailing spaces from every line.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// TestNoLeakOnClosedPipe runs racekit run -v with its output going to a pipe
// that is already closed, as in racekit run -v | head -c 0: its writes fail,
// and racekit must still stop its control plane when it ends.
func TestNoLeakOnClosedPipe(t *testing.T) {
	racekit, _ := build(t)
	tmp := t.TempDir()
	pr, pw, err := os.Pipe()
	assert.NilError(t, err)
	pr.Close() // nobody will ever read racekit's output
	var stderr strings.Builder
	cmd := exec.Command(racekit, "run", "-v")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.Stdout, cmd.Stderr = pw, &stderr
	assert.NilError(t, cmd.Start())
	pw.Close()
	_ = cmd.Wait() // it exits once its run is over; writing to the pipe fails
	assert.Assert(t, strings.Contains(stderr.String(), "ready in"), "the control plane never started; stderr:\n%s", stderr.String())
	procs, files := leftovers(t, tmp)
	assert.Assert(t, len(procs) == 0, "processes left running:\n%s", strings.Join(procs, "\n"))
	assert.Assert(t, len(files) == 0, "left in TMPDIR: %v", files)
}
