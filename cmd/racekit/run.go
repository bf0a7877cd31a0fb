package main

import (
	"bufio"
	"context"
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

	"github.com/racekit/racekit/controller/teaching"
	"github.com/racekit/racekit/harness"
	"github.com/racekit/racekit/internal/assets"
	"github.com/racekit/racekit/scenarios"
)

const runUsage = `usage: racekit run [-v] [--trace text|mermaid|json] [--bug NAME] [--list] [--list-bugs] [FILE.txtar ...]

Runs race scenarios on a control plane of its own and prints a line per
scenario. With -v, or when a scenario fails, it prints the scenario's
timeline. With no FILE it runs the flagship scenario, built into racekit.
--bug runs the scenarios against a teaching variant of the controller that
breaks one rule (--list-bugs lists them); a good scenario then fails.
`

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
	format := fl.String("trace", "text", "trace format: text, mermaid or json")
	list := fl.Bool("list", false, "list the scenarios with their lessons, and run nothing")
	bug := fl.String("bug", "", "run against the named teaching variant of the controller")
	listBugs := fl.Bool("list-bugs", false, "list the teaching variants, and run nothing")
	if err := fl.Parse(args); err != nil {
		fmt.Fprintf(stderr, "racekit run: %v\n%s", err, runUsage)
		return exitUsage
	}
	if *format != "text" && *format != "mermaid" && *format != "json" {
		fmt.Fprintf(stderr, "racekit run: bad --trace %q: want text, mermaid or json\n%s", *format, runUsage)
		return exitUsage
	}
	if *listBugs {
		for _, v := range teaching.Variants() {
			fmt.Fprintf(stdout, "%-28s %s\n", v.Name(), v.Summary())
		}
		return exitOK
	}
	if *bug != "" {
		if _, err := teaching.Lookup(*bug); err != nil {
			fmt.Fprintf(stderr, "racekit run: --bug: %v\n", err)
			return exitUsage
		}
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

	ctx := context.Background()
	cp, err := startControlPlane(ctx, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "racekit run: %v\n", err)
		return exitFail
	}
	defer cp.Close() // waits for an interrupt handler to end the process
	files, cleanup, err := scenarioFiles(fl.Args(), false)
	cp.OnInterrupt(cleanup) // an interrupt exits without running defers
	defer cleanup()
	if err != nil {
		fmt.Fprintf(stderr, "racekit run: %v\n", err)
		return exitFail
	}

	color := *format == "text" && isTerminal(stdout)
	code := exitOK
	for _, r := range harness.RunFiles(ctx, cp, harness.ScriptOptions{Files: files, Bug: *bug}) {
		status := "PASS"
		if !r.Passed {
			status, code = "FAIL", exitFail
		}
		fmt.Fprintf(stdout, "%s %s (%.2fs)\n", status, r.Name, r.Duration.Seconds())
		if !r.Passed {
			fmt.Fprintln(stdout, indent(strings.TrimRight(r.Log, "\n")))
		}
		switch {
		case *format == "mermaid":
			fmt.Fprint(stdout, harness.Mermaid(r.Trace.Rows()))
		case *format == "json":
			out, err := harness.JSON(r.Trace.Rows())
			if err != nil {
				fmt.Fprintf(stderr, "racekit run: %v\n", err)
				return exitFail
			}
			fmt.Fprint(stdout, out)
		case *verbose || !r.Passed:
			fmt.Fprint(stdout, harness.Timeline(r.Trace.Rows(), color))
		}
	}
	return code
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
func startControlPlane(ctx context.Context, w io.Writer) (*harness.ControlPlane, error) {
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
	cp, err := harness.StartControlPlane(ctx)
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
