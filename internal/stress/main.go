// Command stress runs racekit's scenario suites quietly once and then
// under artificial load, and compares the verdicts: a verdict that changes
// with the machine's load is a bug (make stress; docs/reliability.md).
//
// The loads, each for ROUNDS rounds (-rounds, or $STRESS_ROUNDS):
//
//   - busy: a busy loop on every core, in processes of their own, while
//     the suites run;
//   - one core: the busy loops still running, and the suites' processes
//     pinned to one core (sched_setaffinity, inherited by every process a
//     test starts: the control plane, spawned operators) with
//     GOMAXPROCS=1.
//
// Each run is go test -json; a test's verdict is its last pass, fail or
// skip. The command prints one line per load and round, then every test
// whose verdict differs from the quiet run's, and exits 1 if one does.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/racekit/racekit/internal/gotestjson"
)

// suite is one go test command of the stress run: a module's folder, its
// packages and flags, and whether it runs with the race flag, as make test
// runs it (the harness's packages alone: Makefile, RACEPKGS).
type suite struct {
	dir  string
	args []string
	race bool
}

// suites are the catalogue, the harness's scripts, the root package's
// scenarios (the operator on a fixed port), the examples and realbugs.
var suites = []suite{
	{".", []string{"./scenarios", "."}, false},
	{".", []string{"./harness", "-run", "TestControllerScripts|TestNamespaces|TestPorts|TestPythonClient|TestBadInput|TestFailingTwins"}, true},
	{"examples", []string{"./..."}, false},
	{"realbugs", []string{"./..."}, false},
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-burn" {
		burn()
	}
	rounds := flag.Int("rounds", envInt("STRESS_ROUNDS", 1), "rounds of each load")
	race := flag.String("race", os.Getenv("RACE"), "the -race flag for go test, or empty")
	flag.Parse()
	start := time.Now()
	base, _, err := runAll("quiet", *race, false)
	if err != nil {
		fatal(err)
	}
	diffs := 0
	for r := 1; r <= *rounds; r++ {
		for _, pinned := range []bool{false, true} {
			name := fmt.Sprintf("busy, round %d", r)
			if pinned {
				name = fmt.Sprintf("one core, round %d", r)
			}
			stop, err := load()
			if err != nil {
				fatal(err)
			}
			got, outputs, err := runAll(name, *race, pinned)
			stop()
			if err != nil {
				fatal(err)
			}
			n := compare(name, base, got)
			if n > 0 {
				printFailures(name, base, got, outputs)
			}
			diffs += n
		}
	}
	fmt.Printf("stress: %d rounds of 2 loads over %d tests: %d differences in verdicts (%s)\n", *rounds, len(base), diffs, time.Since(start).Round(time.Second))
	if diffs > 0 {
		os.Exit(1)
	}
}

// runAll runs every suite under the named load and returns each test's
// verdict and output, by package and name. The whole go test -json of
// the load is kept in stress-logs/ (logFile).
func runAll(name, race string, pinned bool) (map[string]string, map[string][]string, error) {
	verdicts := map[string]string{}
	outputs := map[string][]string{}
	if err := os.MkdirAll("stress-logs", 0o755); err != nil {
		return nil, nil, err
	}
	log, err := os.Create(logFile(name))
	if err != nil {
		return nil, nil, err
	}
	defer log.Close()
	began := time.Now()
	failed := 0
	for _, s := range suites {
		cmd := exec.Command("go", goTestArgs(race, s)...)
		cmd.Dir = s.dir
		cmd.Env = append(os.Environ(), "RACEKIT_EXPLORATIONS=10")
		cmd.Stderr = os.Stderr
		if pinned {
			cmd.Env = append(cmd.Env, "GOMAXPROCS=1")
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, nil, err
		}
		if pinned {
			// Pinned before it starts: every process it starts inherits
			// the mask.
			runtime.LockOSThread()
			var one unix.CPUSet
			one.Set(0)
			if err := unix.SchedSetaffinity(0, &one); err != nil {
				return nil, nil, fmt.Errorf("pin to one core: %w", err)
			}
		}
		err = cmd.Start()
		if pinned {
			var all unix.CPUSet
			for i := range runtime.NumCPU() {
				all.Set(i)
			}
			_ = unix.SchedSetaffinity(0, &all)
			runtime.UnlockOSThread()
		}
		if err != nil {
			return nil, nil, err
		}
		mine := map[string]string{}
		if err := readVerdicts(io.TeeReader(out, log), mine, outputs); err != nil {
			return nil, nil, err
		}
		if err := ran(s, mine, cmd.Wait()); err != nil {
			return nil, nil, fmt.Errorf("%s: %w (go test -json in %s)", name, err, logFile(name))
		}
		for k, v := range mine {
			verdicts[k] = v
		}
	}
	for _, v := range verdicts {
		if v == "fail" {
			failed++
		}
	}
	fmt.Printf("stress: %-18s %d tests, %d failed (%s)\n", name, len(verdicts), failed, time.Since(began).Round(time.Second))
	return verdicts, outputs, nil
}

// logFile is where runAll keeps the go test -json of the load called name:
// stress-logs/busy-round-1.json.
func logFile(name string) string {
	slug := strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(strings.ReplaceAll(name, ", ", "-"))), "-")
	return "stress-logs/" + slug + ".json"
}

// tailLines is how many lines of a failing test's output printFailures
// shows.
const tailLines = 40

// printFailures prints, for each test that passed quietly and failed
// under the load called name, the last tailLines lines of its output, so
// that the cause is on the screen; the whole is in logFile(name).
func printFailures(name string, base, got map[string]string, outputs map[string][]string) {
	var keys []string
	for k, g := range got {
		if g == "fail" && base[k] != "fail" && strings.Contains(k, " ") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		lines := outputs[k]
		if len(lines) > tailLines {
			lines = lines[len(lines)-tailLines:]
		}
		fmt.Printf("--- %s, under %s (last %d lines; all of it in %s):\n%s", k, name, len(lines), logFile(name), strings.Join(lines, ""))
	}
}

// goTestArgs returns the arguments of go test for suite s, with the race
// flag when race is set.
func goTestArgs(race string, s suite) []string {
	args := []string{"test", "-json", "-count=1", "-timeout", "60m"}
	if race != "" && s.race {
		args = append(args, race)
	}
	return append(args, s.args...)
}

// ran returns an error when suite s did not run as a suite of tests: go
// test ended (err, from Wait) other than with a failing test among its
// verdicts, or it gave no verdict at all. Without it, a go test that could
// not start (a bad flag, a build failure) would be 0 tests and 0
// differences, a silent pass.
func ran(s suite, verdicts map[string]string, err error) error {
	where := strings.Join(append([]string{"go test"}, s.args...), " ")
	if s.dir != "." {
		where += " (in " + s.dir + ")"
	}
	if len(verdicts) == 0 {
		return fmt.Errorf("%s gave no verdict: %v", where, err)
	}
	if err == nil {
		return nil
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		return fmt.Errorf("%s: %w", where, err)
	}
	for _, v := range verdicts {
		if v == "fail" {
			return nil // a failing test is a verdict
		}
	}
	return fmt.Errorf("%s failed with no failing test: %w", where, err)
}

// readVerdicts reads go test -json (gotestjson.Verdicts).
func readVerdicts(r io.Reader, verdicts map[string]string, outputs map[string][]string) error {
	return gotestjson.Verdicts(r, verdicts, outputs)
}

// compare prints the tests whose verdict in got differs from base's, and
// returns how many do. A test only one of them ran counts.
func compare(name string, base, got map[string]string) int {
	var diffs []string
	for k, v := range base {
		if g, ok := got[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("  %s: %s quietly, not run under %s", k, v, name))
		} else if g != v {
			diffs = append(diffs, fmt.Sprintf("  %s: %s quietly, %s under %s", k, v, g, name))
		}
	}
	for k, g := range got {
		if _, ok := base[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("  %s: not run quietly, %s under %s", k, g, name))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		fmt.Println(strings.Join(diffs, "\n"))
	}
	return len(diffs)
}

// load starts a busy loop on every core, each in a process of its own, and
// returns what stops them.
func load() (func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var cmds []*exec.Cmd
	for range runtime.NumCPU() {
		c := exec.Command(exe, "-burn")
		if err := c.Start(); err != nil {
			return nil, err
		}
		cmds = append(cmds, c)
	}
	return func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}, nil
}

// burn spins one core until killed.
func burn() {
	runtime.GOMAXPROCS(1)
	n := 0
	for {
		n++
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "stress:", err)
	os.Exit(2)
}
