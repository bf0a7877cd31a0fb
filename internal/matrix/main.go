// Command matrix runs racekit's catalogue (with the API-semantics truth
// table, the api_* scenarios) and the real bugs against every release of
// the release matrix (internal/assets.Releases), and prints one table:
// scenario × release, pass, FAIL or skip, then the reason for each
// scenario whose verdict differs between releases (make matrix;
// docs/api-semantics.md, "Across releases").
//
// A release's binaries are built first, from its module under
// tools/releases, as make envtest builds the default's; a release that
// does not build is reported as such, with the end of its build's output,
// and the others still run. The command exits 1 when a scenario fails on
// some release or a release does not build: a scenario that holds on some
// releases only says so itself (requires kubernetes>=1.35) and is skipped,
// with the reason, on the others.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/racekit/racekit/internal/assets"
	"github.com/racekit/racekit/internal/gotestjson"
)

// suite is one go test command the matrix runs on each release.
type suite struct {
	dir  string
	args []string
}

// suites are the catalogue with the truth table, and the real bugs.
var suites = []suite{
	{".", []string{"./scenarios", "-run", "^TestScenarios$"}},
	{"realbugs", []string{"./rabbitmq", "-run", "^(TestBugs|TestGC|TestRegressions)$"}},
}

// outcome is one scenario's verdict on one release, and why when it is not
// a pass.
type outcome struct {
	verdict, why string
}

func main() {
	only := flag.String("releases", "", "run only these `VERSIONS`, comma-separated (default every release of the matrix)")
	flag.Parse()
	releases := assets.Releases
	if *only != "" {
		releases = nil
		for _, v := range strings.Split(*only, ",") {
			rel, err := assets.ReleaseOf(v)
			if err != nil {
				fatal(err)
			}
			releases = append(releases, rel)
		}
	}
	table := map[string]map[string]outcome{} // scenario → release → outcome
	var broken []string
	for _, rel := range releases {
		start := time.Now()
		if err := build(rel); err != nil {
			broken = append(broken, fmt.Sprintf("%s does not build: %v", rel.Kubernetes, err))
			fmt.Printf("matrix: Kubernetes %s does not build (%s)\n", rel.Kubernetes, time.Since(start).Round(time.Second))
			continue
		}
		built := time.Since(start)
		n := 0
		for _, s := range suites {
			got, err := run(rel, s)
			if err != nil {
				fatal(fmt.Errorf("kubernetes %s: %w", rel.Kubernetes, err))
			}
			for name, o := range got {
				if table[name] == nil {
					table[name] = map[string]outcome{}
				}
				table[name][rel.Kubernetes] = o
				n++
			}
		}
		fmt.Printf("matrix: Kubernetes %s: %d scenarios (build %s, runs %s)\n", rel.Kubernetes, n,
			built.Round(time.Second), (time.Since(start) - built).Round(time.Second))
	}
	failed := printTable(os.Stdout, releases, table)
	for _, b := range broken {
		fmt.Println(b)
	}
	if failed > 0 || len(broken) > 0 {
		os.Exit(1)
	}
}

// build makes rel's kube-apiserver, etcd and kube-controller-manager ready,
// as make envtest and make controller-manager do for the default.
func build(rel assets.Release) error {
	for _, stage := range []string{"", "controller-manager"} {
		args := []string{"run", "./internal/assets/envtest"}
		if stage != "" {
			args = append(args, stage)
		}
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), assets.ReleaseEnv+"="+rel.Kubernetes)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.MultiWriter(os.Stdout, &out), io.MultiWriter(os.Stderr, &out)
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%w\n%s", err, tail(out.String(), 20))
		}
	}
	return nil
}

// run runs s on rel and returns each scenario's outcome, by its subtest's
// name ("TestScenarios/api_update_stale").
func run(rel assets.Release, s suite) (map[string]outcome, error) {
	args := append([]string{"test", "-json", "-count=1", "-timeout", "60m"}, s.args...)
	cmd := exec.Command("go", args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), assets.ReleaseEnv+"="+rel.Kubernetes)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	verdicts, outputs := map[string]string{}, map[string][]string{}
	if rerr := gotestjson.Verdicts(bytes.NewReader(out), verdicts, outputs); rerr != nil {
		return nil, rerr
	}
	got := map[string]outcome{}
	for key, v := range verdicts {
		_, test, ok := strings.Cut(key, " ")
		if !ok || !strings.Contains(test, "/") || strings.Count(test, "/") > 1 {
			continue // a package, a top-level test, or a part of a scenario
		}
		got[test] = outcome{v, reason(outputs[key])}
	}
	if len(got) == 0 {
		return nil, fmt.Errorf("go test %s in %s ran no scenario: %v\n%s", strings.Join(s.args, " "), s.dir, err, tail(string(out), 20))
	}
	return got, nil
}

// reason is the line of a scenario's output that says why it failed or was
// skipped.
func reason(lines []string) string {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "FAIL: ") || strings.Contains(t, ": requires kubernetes") {
			return t
		}
	}
	return ""
}

// printTable writes the table and the differences, and returns how many
// scenarios failed on some release.
func printTable(w io.Writer, releases []assets.Release, table map[string]map[string]outcome) int {
	names := make([]string, 0, len(table))
	for n := range table {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "\n| scenario |")
	for _, r := range releases {
		fmt.Fprintf(w, " %s |", r.Kubernetes)
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(releases)))
	failed := 0
	var diffs []string
	for _, n := range names {
		fmt.Fprintf(w, "| %s |", n)
		seen, anyFail := map[string]bool{}, false
		for _, r := range releases {
			o, ok := table[n][r.Kubernetes]
			v := "not run"
			if ok {
				v = map[string]string{"pass": "pass", "fail": "FAIL", "skip": "skip"}[o.verdict]
			}
			anyFail = anyFail || v == "FAIL"
			seen[v] = true
			fmt.Fprintf(w, " %s |", v)
		}
		fmt.Fprintln(w)
		if anyFail {
			failed++
		}
		if len(seen) > 1 {
			for _, r := range releases {
				if o := table[n][r.Kubernetes]; o.verdict != "pass" && o.verdict != "" {
					diffs = append(diffs, fmt.Sprintf("  %s on %s: %s", n, r.Kubernetes, o.why))
				}
			}
		}
	}
	fmt.Fprintf(w, "\n%d scenarios, %d releases; %d differ between releases, %d fail on some release\n", len(names), len(releases), countDiffering(table, releases), failed)
	if len(diffs) > 0 {
		fmt.Fprintln(w, "where they differ:")
		fmt.Fprintln(w, strings.Join(diffs, "\n"))
	}
	return failed
}

// countDiffering counts the scenarios whose verdicts are not all the same.
func countDiffering(table map[string]map[string]outcome, releases []assets.Release) int {
	n := 0
	for _, byRel := range table {
		seen := map[string]bool{}
		for _, r := range releases {
			seen[byRel[r.Kubernetes].verdict] = true
		}
		if len(seen) > 1 {
			n++
		}
	}
	return n
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "matrix: %v\n", err)
	os.Exit(2)
}
