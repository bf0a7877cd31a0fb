// Command timings prints where make test's time goes (make timings): it
// runs go test -json over the root module, the examples and realbugs, as
// make test's tests stages do, and prints each package's time and the N
// slowest tests (top-level tests; a test's subtests are part of it), with
// the slowest of their subtests beside them.
//
// With -json FILE... it reads go test -json output saved before instead of
// running anything.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"time"
)

// event is a line of go test -json.
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// timing is one test's or package's time.
type timing struct {
	pkg, test string
	secs      float64
	failed    bool
	// output is what a failed test or package printed, its own lines
	// only (a subtest's are its own).
	output []string
}

func main() {
	n := flag.Int("n", 20, "how many of the slowest tests to print")
	fromJSON := flag.Bool("json", false, "read the go test -json files given as arguments instead of running go test")
	race := flag.String("race", os.Getenv("RACE"), "the -race flag for go test, or empty")
	flag.Parse()
	var tests, pkgs []timing
	collect := func(r io.Reader) error {
		t, p, err := read(r)
		tests, pkgs = append(tests, t...), append(pkgs, p...)
		return err
	}
	start := time.Now()
	if *fromJSON {
		for _, f := range flag.Args() {
			fh, err := os.Open(f)
			if err != nil {
				fatal(err)
			}
			err = collect(fh)
			fh.Close()
			if err != nil {
				fatal(err)
			}
		}
	} else {
		for _, run := range runs(*race) {
			cmd := exec.Command("go", run.args...)
			cmd.Dir = run.dir
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				fatal(err)
			}
			if err := cmd.Start(); err != nil {
				fatal(err)
			}
			if err := collect(out); err != nil {
				fatal(err)
			}
			_ = cmd.Wait() // a failing test is read above, and marked
		}
	}
	report(os.Stdout, tests, pkgs, *n)
	failures := reportFailures(os.Stdout, tests, pkgs)
	if !*fromJSON {
		fmt.Printf("timings: %s in all\n", time.Since(start).Round(time.Second))
	}
	if failures > 0 {
		// The times of a run that failed are a failing run's: say so
		// in the status too, not only in the table.
		fmt.Fprintf(os.Stderr, "timings: %d failed (their output is above)\n", failures)
		os.Exit(1)
	}
}

// goTest is one go test command: its folder and arguments.
type goTest struct {
	dir  string
	args []string
}

// runs returns the go test commands make test runs (tools/tests), with
// -json: the root module's race packages with the race flag, its other
// packages, the examples and realbugs without it (tools/packages).
func runs(race string) []goTest {
	base := []string{"test", "-json", "-count=1", "-timeout", "60m"}
	pkgs := func(set string) []string {
		out, err := exec.Command("tools/packages", set).Output()
		if err != nil {
			fatal(fmt.Errorf("tools/packages %s: %w", set, err))
		}
		return strings.Fields(string(out))
	}
	racing := append(slices.Clone(base), pkgs("race")...)
	if race != "" {
		racing = append(append(slices.Clone(base), race), pkgs("race")...)
	}
	return []goTest{
		{".", racing},
		{".", append(slices.Clone(base), pkgs("plain")...)},
		{"examples", append(slices.Clone(base), "./...")},
		{"realbugs", append(slices.Clone(base), "./...")},
	}
}

// read reads go test -json from r: each top-level test's time and each
// package's, and, beside them, the subtests' (named PARENT/SUB).
//
// A test's time is the longer of what go test reports (Elapsed) and the
// wall time from its start to its end: a test whose subtests are parallel
// reports only its own function's time, though it lasts until they end.
func read(r io.Reader) (tests, pkgs []timing, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	started := map[string]time.Time{}
	output := map[string][]string{}
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		key := e.Package + " " + e.Test
		if e.Action == "run" || e.Action == "start" {
			started[key] = e.Time
		}
		if e.Action == "output" {
			output[key] = append(output[key], strings.TrimSuffix(e.Output, "\n"))
		}
		if e.Action != "pass" && e.Action != "fail" {
			continue
		}
		lines := output[key]
		delete(output, key)
		secs := e.Elapsed
		if s, ok := started[key]; ok && !e.Time.IsZero() {
			secs = max(secs, e.Time.Sub(s).Seconds())
		}
		t := timing{pkg: e.Package, test: e.Test, secs: secs, failed: e.Action == "fail"}
		if t.failed {
			t.output = lines
		}
		if e.Test == "" {
			pkgs = append(pkgs, t)
		} else {
			tests = append(tests, t)
		}
	}
	return tests, pkgs, sc.Err()
}

// report writes the packages by time, and the n slowest top-level tests,
// each with its slowest subtest.
func report(w io.Writer, tests, pkgs []timing, n int) {
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].secs > pkgs[j].secs })
	fmt.Fprintln(w, "packages, slowest first:")
	for _, p := range pkgs {
		fmt.Fprintf(w, "  %8.1f s  %s%s\n", p.secs, p.pkg, failed(p))
	}
	slowestSub := map[string]timing{}
	var top []timing
	for _, t := range tests {
		parent, _, sub := strings.Cut(t.test, "/")
		if !sub {
			top = append(top, t)
			continue
		}
		key := t.pkg + " " + parent
		if s, ok := slowestSub[key]; !ok || t.secs > s.secs {
			slowestSub[key] = t
		}
	}
	sort.Slice(top, func(i, j int) bool { return top[i].secs > top[j].secs })
	if len(top) > n {
		top = top[:n]
	}
	fmt.Fprintf(w, "the %d slowest tests:\n", len(top))
	fmt.Fprintln(w, "| # | test | package | s | slowest subtest |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for i, t := range top {
		sub := ""
		if s, ok := slowestSub[t.pkg+" "+t.test]; ok {
			sub = fmt.Sprintf("%s (%.1f s)", strings.TrimPrefix(s.test, t.test+"/"), s.secs)
		}
		fmt.Fprintf(w, "| %d | %s%s | %s | %.1f | %s |\n", i+1, t.test, failed(t), strings.TrimPrefix(t.pkg, "github.com/racekit/racekit"), t.secs, sub)
	}
}

// tail is how many of a failure's last lines reportFailures prints.
const tail = 60

// reportFailures writes what each failed test printed, and each failed
// package with no failed test (a build that failed, a TestMain, a
// timeout), its last lines, and returns how many it wrote. A test whose
// subtests failed is left to them: its own lines are the --- FAIL
// lines.
func reportFailures(w io.Writer, tests, pkgs []timing) int {
	n := 0
	hasFailedChild := map[string]bool{}
	for _, t := range tests {
		if !t.failed {
			continue
		}
		hasFailedChild[t.pkg+" "] = true
		if i := strings.LastIndex(t.test, "/"); i >= 0 {
			hasFailedChild[t.pkg+" "+t.test[:i]] = true
		}
	}
	write := func(t timing, name string) {
		n++
		lines := t.output
		if len(lines) > tail {
			fmt.Fprintf(w, "--- %s failed (its last %d lines of %d):\n", name, tail, len(lines))
			lines = lines[len(lines)-tail:]
		} else {
			fmt.Fprintf(w, "--- %s failed:\n", name)
		}
		for _, l := range lines {
			fmt.Fprintln(w, "    "+l)
		}
	}
	for _, t := range tests {
		if t.failed && !hasFailedChild[t.pkg+" "+t.test] {
			write(t, t.pkg+" "+t.test)
		}
	}
	for _, p := range pkgs {
		if p.failed && !hasFailedChild[p.pkg+" "] {
			write(p, p.pkg)
		}
	}
	return n
}

func failed(t timing) string {
	if t.failed {
		return " (FAILED)"
	}
	return ""
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "timings:", err)
	os.Exit(2)
}
