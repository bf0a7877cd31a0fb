package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/term"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/racekit/racekit/controller/race"
	"github.com/racekit/racekit/controller/teaching"
	"github.com/racekit/racekit/harness"
	"github.com/racekit/racekit/internal/assets"
	"github.com/racekit/racekit/scenarios"
)

const runUsage = "usage: racekit run [-v] [--unfold] [--trace text|mermaid|json] [--bug NAME] [--crds PATH]... [--wait D] [--kubernetes VERSION] [--list] [--list-bugs] [FILE.txtar ...]\n"

const runHelp = runUsage + `
Runs race scenarios on a control plane of its own and prints a line per
scenario, PASS or FAIL. With -v, or when a scenario fails, it prints the
scenario's timeline. An actor whose lists and watches span more than 20
resources (kube-controller-manager's informers) has them and its discovery
folded into one line of the timeline and of --trace mermaid, where the
first was; --unfold shows each (the trace holds them all: --trace json
has every row). With no FILE it runs the flagship scenario, built into
racekit. --bug runs the scenarios against a teaching variant of the
controller that breaks one rule (--list-bugs lists them); a good scenario
then fails.

--crds PATH installs the CustomResourceDefinitions in PATH, a file or a
folder of YAML or JSON (a kubebuilder project's config/crd/bases), before
the scenarios run; give it once per path. With it, a controller written in
any language is raced from a txtar file alone: the scenario spawns it
through the racing proxy (spawn controller -- python3 operator.py). A path
that does not exist, or holds no CRD, is a usage error.

--wait D bounds every wait for what runs on its own (await, idle, ended,
and spawn's wait for a fixed port another racekit process holds) unless a
line says within=; the default is 30s. A slow machine may need more.

--trace json and --trace mermaid write for tools: standard output holds
one document and nothing else, and the PASS and FAIL lines, failure logs
and timelines go to standard error.
  json     one array for any number of files, an object per scenario:
           {"scenario": NAME, "passed": BOOL, "failure": MESSAGE, "failures": [...],
           "rows": [...]}, with "failure" (the failing lines and why) and
           "failures" (the same, as values: kind, file, line, command,
           message, rules) only when it failed
  mermaid  one sequence diagram, so it takes one FILE at most

Exit status: 0 when every scenario passed, 1 when one failed, 2 for a usage
error.

Flags:
`

// kubernetesUsage is the help of --kubernetes, in run and explore.
const kubernetesUsage = "race against Kubernetes `VERSION` of racekit's release matrix (1.37.2, 1.36.3, 1.35.4 or 1.34.4; default $RACEKIT_KUBERNETES, or 1.37.2); make matrix builds them"

// scenarioJSON is one scenario in the output of racekit run --trace json.
type scenarioJSON struct {
	Scenario string `json:"scenario"`
	Passed   bool   `json:"passed"`
	Failure  string `json:"failure,omitempty"`
	// Failures are what went wrong, as values (harness.Failure): for
	// tools, which must not read Failure's text back.
	Failures []harness.Failure `json:"failures,omitempty"`
	Rows     []harness.Row     `json:"rows"`
}

// runCmd is racekit run. It returns the process exit code.
func runCmd(args []string, stdout, stderr io.Writer) int {
	// When racekit's output is a pipe that closes (racekit run | head), Go
	// would die on the next write to it and leave the control plane
	// running. Ignored, SIGPIPE turns such writes into errors instead, and
	// the run ends the normal way, stopping the control plane. (Handling
	// SIGPIPE with signal.Notify would be wrong: the kernel raises it for
	// every broken pipe or socket, not only standard output.)
	signal.Ignore(syscall.SIGPIPE)
	// envtest logs through controller-runtime's logger, which would
	// otherwise warn that it was never set; a workshop needs neither.
	ctrllog.SetLogger(logr.Discard())
	fl := flag.NewFlagSet("run", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	verbose := fl.Bool("v", false, "print every scenario's timeline")
	unfold := fl.Bool("unfold", false, "fold no row of the timeline or the diagram: an actor's many lists, watches and discovery reads too")
	format := fl.String("trace", "text", "trace format: text, mermaid or json")
	list := fl.Bool("list", false, "list the scenarios with their lessons, and run nothing")
	bug := fl.String("bug", "", "run against the named teaching variant of the controller")
	listBugs := fl.Bool("list-bugs", false, "list the teaching variants, and run nothing")
	var crdPaths crdFlag
	fl.Var(&crdPaths, "crds", crdUsage)
	wait := fl.Duration("wait", 0, "bound every wait for what runs on its own to `D` unless a line says within= (default 30s)")
	kube := fl.String("kubernetes", "", kubernetesUsage)
	if code, done := flagsDone("run", fl.Parse(args), fl, runHelp, runUsage, stdout, stderr); done {
		return code
	}
	if err := harness.SelectRelease(*kube); err != nil {
		fmt.Fprintf(stderr, "racekit run: --kubernetes: %v\n%s", err, runUsage)
		return exitUsage
	}
	if *wait < 0 {
		fmt.Fprintf(stderr, "racekit run: bad --wait %v: want a positive duration such as 2m\n%s", *wait, runUsage)
		return exitUsage
	}
	if *format != "text" && *format != "mermaid" && *format != "json" {
		fmt.Fprintf(stderr, "racekit run: bad --trace %q: want text, mermaid or json\n%s", *format, runUsage)
		return exitUsage
	}
	if *format == "mermaid" && fl.NArg() > 1 {
		fmt.Fprintf(stderr, "racekit run: --trace mermaid draws one diagram, of one scenario: give one FILE, not %d\n%s", fl.NArg(), runUsage)
		return exitUsage
	}
	if *listBugs {
		for _, v := range teaching.Variants() {
			fmt.Fprintf(stdout, "%-28s %s\n", v.Name(), v.Summary())
		}
		return exitOK
	}
	var variant teaching.Variant
	if *bug != "" {
		v, err := teaching.Lookup(*bug)
		if err != nil {
			fmt.Fprintf(stderr, "racekit run: --bug: %v\n", err)
			return exitUsage
		}
		variant = v
	}
	if *list {
		files, cleanup, err := scenarioFiles(fl.Args(), true)
		defer cleanup()
		if err != nil {
			fmt.Fprintf(stderr, "racekit run: %v\n", err)
			return exitUsage
		}
		for _, f := range files {
			fmt.Fprintf(stdout, "%-32s %s\n", harness.ScenarioName(f), lesson(f))
		}
		return exitOK
	}
	for _, a := range fl.Args() {
		if fi, err := os.Stat(a); err != nil || fi.IsDir() {
			fmt.Fprintf(stderr, "racekit run: no scenario file %s\n", a)
			return exitUsage
		}
	}
	crds, err := crdPaths.read()
	if err != nil {
		fmt.Fprintf(stderr, "racekit run: %v\n", err)
		return exitUsage
	}

	ctx := context.Background()
	cp, err := startControlPlane(ctx, stderr, harness.WithCRDs(crds))
	if err != nil {
		fmt.Fprintf(stderr, "racekit run: %v\n", err)
		return exitFail
	}
	selfOnPath()
	defer cp.Close() // waits for an interrupt handler to end the process
	files, cleanup, err := scenarioFiles(fl.Args(), false)
	cp.OnInterrupt(cleanup) // an interrupt exits without running defers
	defer cleanup()
	if err != nil {
		fmt.Fprintf(stderr, "racekit run: %v\n", err)
		return exitFail
	}

	// With --trace json or mermaid, standard output is the document alone,
	// so that a tool can parse it; what people read goes to stderr.
	human := stdout
	if *format != "text" {
		human = stderr
	}
	color := isTerminal(human)
	code := exitOK
	opts, err := race.Setup("", race.Options{Bug: variant}).ScriptOptions()
	if err != nil {
		fmt.Fprintf(stderr, "racekit run: %v\n", err)
		return exitFail
	}
	opts.Files, opts.WaitTimeout = files, *wait
	results := harness.RunFiles(ctx, cp, opts)
	for _, r := range results {
		status := "PASS"
		if !r.Passed {
			status, code = "FAIL", exitFail
		}
		fmt.Fprintf(human, "%s %s (%.2fs)\n", status, r.Name, r.Duration.Seconds())
		if !r.Passed {
			fmt.Fprintln(human, indent(strings.TrimRight(r.Log, "\n")))
		}
		if *verbose || !r.Passed {
			if *unfold {
				fmt.Fprint(human, harness.TimelineUnfolded(r.Trace.Rows(), color))
			} else {
				fmt.Fprint(human, harness.Timeline(r.Trace.Rows(), color))
			}
		}
	}
	if *format == "text" {
		return code
	}
	doc, err := document(*format, results, *unfold)
	if err == nil {
		_, err = io.WriteString(stdout, doc)
	}
	if err != nil {
		fmt.Fprintf(stderr, "racekit run: --trace %s: %v\n", *format, err)
		return exitFail
	}
	return code
}

// document renders results as --trace json or mermaid writes them on
// standard output: one JSON array, or the diagram of the one scenario.
func document(format string, results []harness.Result, unfold bool) (string, error) {
	if format == "json" {
		return traceJSON(results)
	}
	var rows []harness.Row
	if len(results) > 0 {
		rows = results[0].Trace.Rows()
	}
	if unfold {
		return harness.MermaidUnfolded(rows), nil
	}
	return harness.Mermaid(rows), nil
}

// traceJSON renders results as racekit run --trace json writes them: one
// JSON array, an object per scenario.
func traceJSON(results []harness.Result) (string, error) {
	out := make([]scenarioJSON, 0, len(results))
	for _, r := range results {
		s := scenarioJSON{Scenario: r.Name, Passed: r.Passed, Rows: r.Trace.Rows()}
		if !r.Passed {
			s.Failure, s.Failures = r.FailureText(), r.Failures
		}
		out = append(out, s)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode traces: %w", err)
	}
	return string(b) + "\n", nil
}

// selfOnPath puts this racekit's folder first on PATH, so that a scenario
// that spawns racekit (spawn controller -- racekit controller ...) runs
// this very binary, also under go run, whose binary is in a folder of its
// own.
func selfOnPath() {
	if exe, err := os.Executable(); err == nil {
		os.Setenv("PATH", filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
}

// scenarioFiles returns the files to run: the arguments, or the embedded
// flagship (all embedded scenarios with --list), written to a temporary
// folder that cleanup removes.
func scenarioFiles(args []string, all bool) ([]string, func(), error) {
	nothing := func() {}
	if len(args) > 0 {
		return args, nothing, nil
	}
	dir, err := os.MkdirTemp("", "racekit-run-")
	if err != nil {
		return nil, nothing, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	names := []string{scenarios.Flagship}
	if all {
		if names, err = fs.Glob(scenarios.Files, "*.txtar"); err != nil {
			return nil, cleanup, err
		}
		sort.Strings(names)
	}
	var files []string
	for _, n := range names {
		data, err := fs.ReadFile(scenarios.Files, n)
		if err != nil {
			return nil, cleanup, err
		}
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return nil, cleanup, err
		}
		files = append(files, p)
	}
	return files, cleanup, nil
}

// lesson returns the first sentence of a scenario's header comment, which
// may run over several comment lines.
func lesson(file string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	var para []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "#") {
			break
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		if text == "" {
			if len(para) > 0 {
				break
			}
			continue
		}
		para = append(para, text)
	}
	s := strings.Join(para, " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return s
}

// startControlPlane finds the control-plane binaries, building them first
// when this is a checkout that has not built them, and starts them, with a
// progress line on w.
func startControlPlane(ctx context.Context, w io.Writer, opts ...harness.StartOption) (*harness.ControlPlane, error) {
	if _, err := assets.Find(); errors.Is(err, assets.ErrMissing) && os.Getenv(assets.EnvVar) == "" {
		wd, _ := os.Getwd()
		root, rerr := assets.Root(wd)
		if rerr != nil {
			return nil, fmt.Errorf("%w; and this is not a racekit checkout to build them in (%v)", err, rerr)
		}
		if _, err := assets.Build(ctx, root, w); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(w, "racekit: starting the control plane (kube-apiserver %s, etcd %s)...", assets.KubernetesVersion, assets.EtcdVersion)
	start := time.Now()
	crds, err := race.Setup("", race.Options{}).ReadCRDs()
	if err != nil {
		return nil, err
	}
	cp, err := harness.StartControlPlane(ctx, append([]harness.StartOption{harness.WithCRDs(crds)}, opts...)...)
	if err != nil {
		fmt.Fprintln(w)
		return nil, err
	}
	fmt.Fprintf(w, " ready in %.1fs\n", time.Since(start).Seconds())
	return cp, nil
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && os.Getenv("NO_COLOR") == "" && term.IsTerminal(int(f.Fd()))
}
