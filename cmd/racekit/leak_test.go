package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
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
// the end of a fuzzing run, and a fuzzing worker that crashes; and after
// SIGKILL, while the control plane starts and once it serves
// (leak_kill_test.go), and while a scenario's spawned process runs
// (leak_spawn_test.go).

// bins are the programs the leak tests run, built before any test starts
// by tools/leak-bins, the one place that says how. make test builds them
// in a stage of its own and names the folder in $RACEKIT_LEAK_BIN: a
// fuzzing build recompiles the whole dependency graph with coverage
// instrumentation, which takes minutes on a cold build cache, and neither
// a guard against a hang nor go test's own -timeout may time the compiler.
// Without the variable, TestMain builds them itself (go test's -timeout
// then covers that build too).
var bins struct {
	dir                             string
	racekit, harnessTest, harnessFz string
	took                            string // what building them took, for guard messages
	err                             error
	temp                            bool // dir is TestMain's, to remove
}

// leakBinEnv names the folder of prebuilt binaries.
const leakBinEnv = "RACEKIT_LEAK_BIN"

// findBinaries points bins at the prebuilt binaries, or builds them, with
// the race flag this test binary was built with, so that they share its
// compiled packages.
func findBinaries() {
	bins.dir = os.Getenv(leakBinEnv)
	if bins.dir == "" {
		dir, err := os.MkdirTemp("", "racekit-leak-bin-")
		if err != nil {
			bins.err = err
			return
		}
		bins.dir, bins.temp = dir, true
		cmd := exec.Command("../../tools/leak-bins", dir)
		if raceEnabled {
			cmd.Env = append(os.Environ(), "RACE=-race")
		}
		out, err := cmd.CombinedOutput()
		bins.took = strings.TrimSpace(string(out))
		if err != nil {
			bins.err = fmt.Errorf("tools/leak-bins: %w\n%s", err, out)
			return
		}
	} else {
		bins.took = "prebuilt in " + bins.dir + " ($" + leakBinEnv + ")"
	}
	bins.racekit = filepath.Join(bins.dir, "racekit")
	bins.harnessTest = filepath.Join(bins.dir, "harness.test")
	bins.harnessFz = filepath.Join(bins.dir, "harness.fuzz.test")
	for _, b := range []string{bins.racekit, bins.harnessTest, bins.harnessFz} {
		if _, err := os.Stat(b); err != nil {
			bins.err = fmt.Errorf("%w (run tools/leak-bins %s)", err, bins.dir)
			return
		}
	}
}

// binaryTests are the tests that run the binaries: the leak tests,
// TestTraceForTools, TestExploreShardsAsProcesses, racekit proxy's
// end-to-end tests and TestCRDsFromTheCommandLine.
var binaryTests = []string{"TestNoLeaks", "TestNoLeakOnClosedPipe", "TestNoLeaksSpawned", "TestNoLeaksKilled", "TestTraceForTools", "TestExploreShardsAsProcesses",
	"TestProxyEndToEnd", "TestProxyDefaultFolder", "TestCRDsFromTheCommandLine", "TestAutoProcess"}

// wantsLeakTests reports whether -run selects one of binaryTests, so that a
// run of the other tests builds nothing.
func wantsLeakTests() bool {
	f := flag.Lookup("test.run")
	if f == nil || f.Value.String() == "" {
		return true
	}
	top, _, _ := strings.Cut(f.Value.String(), "/")
	re, err := regexp.Compile(top)
	return err != nil || slices.ContainsFunc(binaryTests, re.MatchString)
}

func TestMain(m *testing.M) {
	flag.Parse()
	if wantsLeakTests() {
		findBinaries()
	}
	code := m.Run()
	if bins.temp {
		os.RemoveAll(bins.dir)
	}
	os.Exit(code)
}

// built returns the binaries, and fails t if they could not be built.
func built(t *testing.T) {
	t.Helper()
	if bins.err != nil {
		t.Fatalf("build the binaries the leak tests run: %v", bins.err)
	}
	if bins.racekit == "" {
		t.Fatal("the leak test binaries were not built: TestMain did not expect this test to run")
	}
}

// leftovers returns what a process run with tmp as TMPDIR left behind: live
// processes whose command line names tmp, and entries in tmp.
func leftovers(t *testing.T, tmp string) (procs, files []string) {
	t.Helper()
	left, err := os.ReadDir(tmp)
	assert.NilError(t, err)
	for _, e := range left {
		files = append(files, e.Name())
	}
	return running(tmp), files
}

// running returns the live processes whose command line names tmp, as
// "PID: command line". It is safe to call from any goroutine.
func running(tmp string) []string {
	var procs []string
	entries, _ := os.ReadDir("/proc")
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
	return procs
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
	return readUntilLine(t, r, strconv.Quote(want), func(line string) bool { return strings.Contains(line, want) })
}

// readUntilLine reads r until a line matches, and fails, saying what it
// waited for, if r ends first. It returns what it read.
func readUntilLine(t *testing.T, r *bufio.Reader, what string, match func(line string) bool) string {
	t.Helper()
	var seen strings.Builder
	for {
		line, err := r.ReadString('\n')
		seen.WriteString(line)
		if match(line) {
			return seen.String()
		}
		if err != nil {
			t.Fatalf("output ended before %s:\n%s", what, seen.String())
		}
	}
}

// hangGuard kills a process that start started, and every process whose
// command line names its TMPDIR (its control plane, which runs in process
// groups of its own, and what its scenarios spawned), if it still runs
// after a bound: a guard against a hang, not a speed target. The binaries
// were built before it starts. A nil *hangGuard guards nothing.
type hangGuard struct {
	timer *time.Timer
	// hung holds what was running when the guard fired.
	hung atomic.Pointer[string]
}

// guardHang arms a hangGuard for cmd, which runs with tmp as its TMPDIR.
func guardHang(cmd *exec.Cmd, tmp string, bound time.Duration) *hangGuard {
	g := &hangGuard{}
	g.timer = time.AfterFunc(bound, func() {
		// What was running is read before the kill, which would take it
		// away.
		procs := running(tmp)
		what := strings.Join(procs, "\n")
		g.hung.Store(&what)
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for _, p := range procs {
			if pid, err := strconv.Atoi(strings.SplitN(p, ":", 2)[0]); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return g
}

// stop disarms g.
func (g *hangGuard) stop() {
	if g != nil {
		g.timer.Stop()
	}
}

// fatalIfFired fails t if g killed cmd, with what was running and the last
// lines of what cmd wrote, seen.
func (g *hangGuard) fatalIfFired(t *testing.T, cmd *exec.Cmd, started time.Time, seen string) {
	t.Helper()
	if g == nil {
		return
	}
	if procs := g.hung.Load(); procs != nil {
		t.Fatalf("%s %s\nstill running after %v, so the guard killed it (the binaries were built before, outside the guard:\n%s)\nrunning when it was killed:\n%s\nlast lines of output:\n%s",
			cmd.Path, strings.Join(cmd.Args[1:], " "), time.Since(started).Round(time.Second), indent(bins.took), orNothing(*procs), orNothing(lastLines(seen, 30)))
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
	built(t)
	racekit, harnessTest := bins.racekit, bins.harnessTest
	failing := filepath.Join(t.TempDir(), "failing.txtar")
	assert.NilError(t, os.WriteFile(failing, []byte(failingScenario), 0o644))

	// A short fuzzing run, as make fuzz runs it through go test, but with
	// the instrumented binary built beforehand: one worker, a corpus of
	// two seeds (RACEKIT_FUZZ_SEEDS: how the run ends is the subject, and
	// each seed is a scenario run; the whole corpus made this the slowest
	// test of the package), and ten executions past them (an execution
	// count covers the seeds too). A corpus cache of its own keeps the
	// user's out of it.
	const fuzzSeeds = 2
	assert.Assert(t, seeds(t) >= fuzzSeeds)
	fuzzEnv := []string{"RACEKIT_FUZZ_SEEDS=" + strconv.Itoa(fuzzSeeds)}
	fuzz := []string{"-test.run", "^$", "-test.fuzz", "FuzzScript$", "-test.fuzztime", fmt.Sprintf("%dx", fuzzSeeds+10), "-test.parallel", "1",
		"-test.fuzzminimizetime", "1x", "-test.fuzzcachedir=" + t.TempDir()}

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
		notOut     []string      // what the output must not contain
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
		// An exploration interrupted in the middle of its runs: every
		// run's controller goes with the control plane, and the output
		// says how far it got.
		{name: "SIGINT to racekit explore, explore auto", bin: racekit, args: []string{"explore", "../../testdata/auto/webapp_scale.txtar"},
			signalAt: "webapp_scale.txtar: the plans (", wantOut: "interrupted in the plans of webapp_scale.txtar: ", wantStatus: "signal: interrupt",
			alsoOut: []string{"stopping the control plane", "no report is written"},
			// The plans the interrupt failed began no next stage, and
			// no run made a work folder while the control plane's was
			// being removed (the watchdog said "directory not empty").
			notOut: []string{"the reruns that confirm", "racekit-watchdog"}},
		{name: "SIGINT to go test", bin: harnessTest, dir: "../../harness", env: []string{"RACEKIT_SIGNAL_TARGET=1"}, args: []string{"-test.run", "TestSignalTarget$", "-test.v"},
			signalAt: "ready", wantOut: "stopping the control plane", wantStatus: "signal: interrupt"},
		// The fuzzing coordinator stops each worker, and each worker its
		// control plane, once -fuzztime is spent; the run must then return.
		{name: "fuzzing run", bin: bins.harnessFz, dir: "../../harness", env: fuzzEnv, args: fuzz,
			wantOut: "PASS", wantStatus: "exit status 0", alsoOut: []string{"now fuzzing with 1 workers"}, bound: 3 * time.Minute},
		// A worker that crashes cannot stop its control plane; the
		// coordinator adopts the orphans and ends them after the run.
		{name: "fuzzing worker crashes", bin: bins.harnessFz, dir: "../../harness", env: append([]string{"RACEKIT_FUZZ_CRASH=1"}, fuzzEnv...), args: fuzz,
			wantOut: "fuzzing process hung or terminated unexpectedly: exit status 3", wantStatus: "exit status 1", bound: 3 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Each case has its own processes and TMPDIR, and spends
			// most of its time waiting on them.
			t.Parallel()
			started := time.Now()
			cmd, out, tmp := start(t, tc.bin, tc.dir, tc.env, tc.args...)
			var guard *hangGuard
			if tc.bound > 0 {
				// The run takes a fraction of the bound.
				guard = guardHang(cmd, tmp, tc.bound)
				defer guard.stop()
			}
			var seen string
			if tc.signalAt != "" {
				seen = readUntil(t, out, tc.signalAt)
				assert.NilError(t, cmd.Process.Signal(os.Interrupt))
			}
			rest, _ := io.ReadAll(out) // until the process has exited
			seen += string(rest)
			guard.fatalIfFired(t, cmd, started, seen)
			assert.Assert(t, strings.Contains(seen, tc.wantOut), "want %q in the output:\n%s", tc.wantOut, seen)
			assert.Equal(t, status(cmd), tc.wantStatus, "output:\n%s", seen)
			for _, want := range tc.alsoOut {
				assert.Assert(t, strings.Contains(seen, want), "want %q in the output:\n%s", want, seen)
			}
			for _, unwanted := range tc.notOut {
				assert.Assert(t, !strings.Contains(seen, unwanted), "want no %q in the output:\n%s", unwanted, seen)
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

// seeds returns how many inputs FuzzScript seeds its corpus with: the
// files it adds with f.Add.
func seeds(t *testing.T) int {
	t.Helper()
	n := 0
	// FuzzScript's seed patterns, as harness/fuzz_test.go lists them.
	for _, pattern := range []string{"../../scenarios/*.txtar", "../../testdata/bad/*.txtar", "../../testdata/false/*.txtar"} {
		files, err := filepath.Glob(pattern)
		assert.NilError(t, err)
		n += len(files)
	}
	assert.Assert(t, n > 0, "FuzzScript has no seeds")
	return n
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// orNothing returns s, or "(nothing)" for an empty s, so that a message
// never ends in an empty heading.
func orNothing(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(nothing)"
	}
	return s
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
	t.Parallel()
	built(t)
	racekit := bins.racekit
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
