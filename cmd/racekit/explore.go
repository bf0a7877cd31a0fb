package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/term"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/racekit/racekit/controller/race"
	"github.com/racekit/racekit/controller/teaching"
	"github.com/racekit/racekit/harness"
)

// exploreUsage is racekit explore's usage line, which errors repeat.
const exploreUsage = "usage: racekit explore [--depth N] [--emit DIR] [--bug NAME] [--crds PATH]... [--shard I/N] [--parallel N] [--wait D] [--kubernetes VERSION] [--json FILE] [--html FILE] FILE.txtar...\n" +
	"       racekit explore --merge [--json FILE] SHARD.json...\n"

// exploreHelp is what racekit explore -h prints before the flags.
const exploreHelp = exploreUsage + `
Explores the scenario in FILE, or each FILE in turn, on one control plane,
with a table for each. Its explore line names a workload, such as
reconcile webapps/web, and the with lines under it name interferers, such
as annotate bob deployments/web team=blue; the lines after them are the
invariants. A learning run of the workload alone lists the moments of its
calls; then each interferer runs hooked at each moment, every run in a
namespace of its own, and the invariants must hold in every one. racekit
prints a table: the moment, the interferer, the outcome (pass, or the
assertion that failed and the rule it broke) and the 409 Conflicts seen. On
a terminal, a progress line on standard error shows how far it has got;
elsewhere, a line there names each stage as it begins (the learning run,
the runs; explore auto's reference run and twins, plans and confirming
reruns). Interrupted (Ctrl-C, SIGTERM), it stops the control plane and
every process its runs spawned, and says which stage it was in and how
many of its runs were done. docs/explore.md explains it all.

--depth 2 hooks two interferers in each run: every pair of a moment and an
interferer with another;
without --depth, the explore line's depth=N counts (1 when it has none).
--bug explores a teaching variant of the controller instead of the
production one (racekit run --list-bugs lists them). --crds PATH installs
the CRDs in PATH, a file or a folder of YAML or JSON, before the learning
run, as racekit run --crds does; give it once per path. --emit DIR writes each
failing run as a scenario of its own, DIR/NAME_MOMENT.txtar, which fails
while the bug is there and passes once it is fixed; a run in which only the
interferer's own command failed (n/a) is no finding and is not written.
For explore auto, each confirmed finding's scenario is shrunk first: its
setup lines and workload commands are left out, one at a time, while it
still fails at its claim and its neutral twin passes.
DIR must be empty or absent; racekit creates it, and never overwrites a
file. With several FILEs, --emit writes every file's runs into DIR, and
--shard runs shard I/N of each; --json and --html, which write one
exploration's report, take one FILE.

--shard I/N runs shard I of N (1 ≤ I ≤ N): a split of the runs by name,
the same on every machine, so that N processes run every run once between
them. --json FILE writes the report, a shard's or the whole's, as JSON;
racekit refuses a FILE that exists, before anything runs. --merge reads
the JSON reports of every shard of one exploration, joins them, and prints
the table of the whole, as one racekit explore without --shard would; it
needs no control plane, and refuses reports that overlap, leave runs out
or come from different explorations.

--parallel N runs at most N of the runs at once (default four per CPU);
runs that need the same fixed port (spawn ... ports=) take turns for it
whatever N. --wait D bounds every wait for what runs on its own (await,
idle, ended, and spawn's wait for a port another racekit process holds)
unless a line says within=; the default is 30s. A run that could not
start, its port held elsewhere past the wait, is n/a, never a finding.

--html FILE writes one page, which needs no network: the workload's
sequence diagram with each explored moment marked and coloured by outcome,
and the runs, each of which shows its own diagram and failure when
selected. It inlines the Mermaid library that make mermaid installs, and
refuses a FILE that exists, before anything runs.

Exit status: 0 when every run passed, 1 when one failed, 2 for a usage
error, a FILE that is no explore scenario (checked before the control
plane starts, or, for what only the learning run tells, such as an only=
that matches no call, after it), or (with --merge) a report that cannot
be read or merged.

Flags:
`

// startFunc starts a control plane for racekit explore and returns it with
// the function that stops it. Tests pass one that shares theirs.
type startFunc func(ctx context.Context, w io.Writer) (*harness.ControlPlane, func(), error)

// startOwn starts a control plane of racekit's own, as racekit run does.
func startOwn(ctx context.Context, w io.Writer) (*harness.ControlPlane, func(), error) {
	cp, err := startControlPlane(ctx, w)
	if err != nil {
		return nil, nil, err
	}
	return cp, func() { cp.Close() }, nil
}

// exploreCmd is racekit explore. It returns the process exit code.
func exploreCmd(args []string, stdout, stderr io.Writer) int {
	// As in racekit run: a closed output pipe must end the run the normal
	// way, stopping the control plane, and envtest's logger stays quiet.
	signal.Ignore(syscall.SIGPIPE)
	ctrllog.SetLogger(logr.Discard())
	return explore(args, stdout, stderr, startOwn)
}

// exploreFlags are racekit explore's arguments, parsed.
type exploreFlags struct {
	files []string
	depth int // 0: the explore line's
	emit  string
	bug   teaching.Variant
	crds  crdFlag
	shard struct{ i, n int } // n == 0: no --shard
	// parallel and wait are --parallel and --wait: 0 for their defaults.
	parallel int
	wait     time.Duration
	json     string
	html     string
	// merge is set by --merge; then reports are the JSON files to merge,
	// and file is empty.
	merge   bool
	reports []string
	// kubernetes is the release to race against (--kubernetes).
	kubernetes string
}

// parseExploreFlags parses args, which may put the flags before or after
// FILE. It returns flag.ErrHelp for -h, and a message for anything else
// wrong.
func parseExploreFlags(args []string) (exploreFlags, *flag.FlagSet, error) {
	var f exploreFlags
	fl := flag.NewFlagSet("explore", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	fl.IntVar(&f.depth, "depth", 0, "hook `N` interferers in each run, at N moments (1 or 2; default: the explore line's depth=N, or 1)")
	fl.StringVar(&f.emit, "emit", "", "write each failing run as a regression scenario into `DIR`, which must be empty or absent")
	bug := fl.String("bug", "", "explore the teaching variant `NAME` of the controller (racekit run --list-bugs)")
	fl.Var(&f.crds, "crds", crdUsage)
	shard := fl.String("shard", "", "run shard `I/N` of the exploration's runs (1 ≤ I ≤ N)")
	fl.IntVar(&f.parallel, "parallel", 0, "run at most `N` of the exploration's runs at once (default four per CPU)")
	fl.DurationVar(&f.wait, "wait", 0, "bound every wait for what runs on its own to `D` unless a line says within= (default 30s)")
	fl.StringVar(&f.json, "json", "", "write the report as JSON to `FILE`, which must not exist")
	fl.StringVar(&f.html, "html", "", "write the report as one page with its diagrams to `FILE`, which must not exist")
	fl.BoolVar(&f.merge, "merge", false, "merge the JSON reports of shards, given as the arguments, and print the whole's table")
	fl.StringVar(&f.kubernetes, "kubernetes", "", kubernetesUsage)
	var files []string
	for {
		if err := fl.Parse(args); err != nil {
			return f, fl, err
		}
		if fl.NArg() == 0 {
			break
		}
		files, args = append(files, fl.Arg(0)), fl.Args()[1:]
	}
	if f.merge {
		return f, fl, mergeArgs(&f, fl, files)
	}
	switch {
	case len(files) == 0:
		return f, fl, errors.New("want a FILE.txtar to explore, got none")
	case len(files) > 1 && f.json != "":
		return f, fl, fmt.Errorf("--json writes one exploration's report, and %d FILEs were given: explore one FILE with --json", len(files))
	case len(files) > 1 && f.html != "":
		return f, fl, fmt.Errorf("--html draws one exploration's page, and %d FILEs were given: explore one FILE with --html", len(files))
	case flagSet(fl, "parallel") && f.parallel < 1:
		return f, fl, fmt.Errorf("bad --parallel %d: want at least 1", f.parallel)
	case f.wait < 0:
		return f, fl, fmt.Errorf("bad --wait %v: want a positive duration such as 2m", f.wait)
	case depthSet(fl) && (f.depth < 1 || f.depth > harness.MaxExploreDepth):
		return f, fl, fmt.Errorf("bad --depth %d: want 1 or %d", f.depth, harness.MaxExploreDepth)
	}
	if f.emit != "" {
		// Each file's regression scenarios are named after it.
		seen := map[string]string{}
		for _, file := range files {
			name := harness.ScenarioName(file)
			if prev, dup := seen[name]; dup {
				return f, fl, fmt.Errorf("--emit names each regression scenario after its FILE, and %s and %s have one name: explore them apart", prev, file)
			}
			seen[name] = file
		}
	}
	f.files = files
	if *shard != "" {
		i, n, err := parseShard(*shard)
		if err != nil {
			return f, fl, err
		}
		f.shard.i, f.shard.n = i, n
	}
	if *bug != "" {
		v, err := teaching.Lookup(*bug)
		if err != nil {
			return f, fl, fmt.Errorf("--bug: %w", err)
		}
		f.bug = v
	}
	return f, fl, nil
}

// depthSet reports whether --depth was given.
func depthSet(fl *flag.FlagSet) bool { return flagSet(fl, "depth") }

// flagSet reports whether the flag called name was given.
func flagSet(fl *flag.FlagSet, name string) bool {
	set := false
	fl.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// explore runs racekit explore with args, on a control plane from start.
func explore(args []string, stdout, stderr io.Writer, start startFunc) int {
	f, fl, err := parseExploreFlags(args)
	if code, done := flagsDone("explore", err, fl, exploreHelp, exploreUsage, stdout, stderr); done {
		return code
	}
	if err := harness.SelectRelease(f.kubernetes); err != nil {
		fmt.Fprintf(stderr, "racekit explore: --kubernetes: %v\n%s", err, exploreUsage)
		return exitUsage
	}
	if f.merge {
		return merge(f, stdout, stderr)
	}
	if f.json != "" {
		if err := absent(f.json); err != nil {
			fmt.Fprintf(stderr, "racekit explore: --json: %v\n", err)
			return exitUsage
		}
	}
	var lib []byte
	if f.html != "" {
		if err := absent(f.html); err != nil {
			fmt.Fprintf(stderr, "racekit explore: --html: %v\n", err)
			return exitUsage
		}
		if lib, err = mermaidLibrary(); err != nil {
			fmt.Fprintf(stderr, "racekit explore: %v\n", err)
			return exitFail
		}
	}
	for _, file := range f.files {
		if fi, err := os.Stat(file); err != nil || fi.IsDir() {
			fmt.Fprintf(stderr, "racekit explore: no scenario file %s\n", file)
			return exitUsage
		}
	}
	if f.emit != "" {
		if err := emptyOrAbsent(f.emit); err != nil {
			fmt.Fprintf(stderr, "racekit explore: --emit: %v\n", err)
			return exitUsage
		}
	}
	opts, err := race.Setup("", race.Options{Bug: f.bug}).ScriptOptions()
	if err != nil {
		fmt.Fprintf(stderr, "racekit explore: %v\n", err)
		return exitFail
	}
	opts.WaitTimeout, opts.ExploreParallel = f.wait, f.parallel
	// A file that is no explore scenario is refused before the control
	// plane starts, with the file:line of what is wrong.
	for _, file := range f.files {
		if err := harness.CheckExplore(opts, file); err != nil {
			fmt.Fprintf(stderr, "racekit explore: %v\n", err)
			return exitUsage
		}
	}

	crds, err := f.crds.read()
	if err != nil {
		fmt.Fprintf(stderr, "racekit explore: %v\n", err)
		return exitUsage
	}

	ctx := context.Background()
	cp, stop, err := start(ctx, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "racekit explore: %v\n", err)
		return exitFail
	}
	defer stop()
	if err := install(ctx, cp, crds); err != nil {
		fmt.Fprintf(stderr, "racekit explore: %v\n", err)
		return exitFail
	}
	code := exitOK
	for i, file := range f.files {
		if len(f.files) > 1 {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintf(stdout, "== %s\n", file)
		}
		if c := exploreFile(ctx, cp, opts, f, file, lib, stdout, stderr); c > code {
			code = c
		}
	}
	return code
}

// exploreFile explores one FILE for racekit explore and returns its exit
// code: it prints the table, and writes what --json, --html and --emit ask
// for.
func exploreFile(ctx context.Context, cp *harness.ControlPlane, opts harness.ScriptOptions, f exploreFlags, file string, lib []byte, stdout, stderr io.Writer) int {
	// An explore auto finding written by --emit is shrunk first: the
	// setup lines and workload commands it does not need left out.
	xo := harness.ExploreOptions{Depth: f.depth, Variant: f.bug.Name(), Shrink: f.emit != ""}
	xo.Shard.I, xo.Shard.N = f.shard.i, f.shard.n
	var line *progressLine
	at := &whereAt{file: filepath.Base(file), stopped: cp.Interrupted}
	if onTerminal(stderr) {
		line = &progressLine{w: stderr, now: time.Now, start: time.Now()}
		fmt.Fprintf(stderr, "racekit explore: the learning run of %s...", filepath.Base(file))
	} else {
		// One line per stage, where no progress line can be drawn: a
		// log shows how far an exploration got.
		at.log = stderr
	}
	xo.Stage, xo.Progress = at.stage, func(done, total, failed int) {
		at.progress(done, total, failed)
		if line != nil {
			line.update(done, total, failed)
		}
	}
	// An interrupt stops the control plane and every process the runs
	// spawned, and exits; before it does, it says how far the
	// exploration got.
	cp.OnInterrupt(func() {
		if msg := at.interrupted(); msg != "" {
			fmt.Fprintf(stderr, "\nracekit explore: %s\n", msg)
		}
	})
	rep, err := harness.Explore(ctx, cp, opts, file, xo)
	if cp.Interrupted() {
		// The runs in flight failed because the control plane went:
		// no report of them. The interrupt's handler says how far the
		// exploration got, and ends the process.
		cp.Close()
	}
	at.over()
	if line != nil {
		line.clear()
	}
	if err != nil {
		fmt.Fprintf(stderr, "racekit explore: %v\n", err)
		// A file refused once its learning run has run (an only= that
		// keeps no call) is no explore scenario racekit can run, as one
		// refused before the control plane started.
		if refusal := (*harness.ExploreRefusal)(nil); errors.As(err, &refusal) {
			return exitUsage
		}
		return exitFail
	}
	fmt.Fprint(stdout, rep.Table())
	if f.json != "" {
		if err := writeJSON(f.json, rep); err != nil {
			fmt.Fprintf(stderr, "racekit explore: --json: %v\n", err)
			return exitFail
		}
	}
	if f.html != "" {
		if err := writeHTML(f.html, rep, lib); err != nil {
			fmt.Fprintf(stderr, "racekit explore: --html: %v\n", err)
			return exitFail
		}
	}
	failed := rep.Failed()
	if f.emit != "" && len(failed) == 0 {
		fmt.Fprintf(stderr, "racekit explore: no run of %s failed, so --emit wrote nothing for it\n", filepath.Base(file))
	}
	if f.emit != "" && len(failed) > 0 {
		written, err := emit(f.emit, rep)
		if err != nil {
			fmt.Fprintf(stderr, "racekit explore: --emit: %v\n", err)
			return exitFail
		}
		fmt.Fprintf(stderr, "racekit explore: wrote %d regression scenarios:\n", len(written))
		for _, w := range written {
			fmt.Fprintf(stderr, "    %s\n", w)
		}
	}
	if len(failed) > 0 {
		return exitFail
	}
	return exitOK
}

// emptyOrAbsent returns an error unless dir is absent or an empty folder.
func emptyOrAbsent(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s is not a folder to write scenarios into: %w", dir, err)
	case len(entries) > 0:
		return fmt.Errorf("%s holds %s already: give an empty or new folder, so that no file of yours is overwritten", dir, entries[0].Name())
	}
	return nil
}

// emit writes each failing interleaving of rep as a regression scenario,
// dir/NAME_MOMENT.txtar, and returns the paths it wrote. It creates dir and
// never overwrites a file; the caller checked that dir was empty before
// anything ran.
func emit(dir string, rep *harness.ExploreReport) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	var written []string
	for _, il := range rep.Failed() {
		path := filepath.Join(dir, harness.ScenarioName(rep.File)+"_"+il.Name+".txtar")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return written, fmt.Errorf("write a regression scenario: %w", err)
		}
		_, err = f.Write(rep.Regression(il))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return written, fmt.Errorf("write %s: %w", path, err)
		}
		written = append(written, path)
	}
	return written, nil
}

// whereAt is how far racekit explore's exploration of file has got: its
// stage and the runs of it done, for the line an interrupt prints. With
// log set, each stage's beginning after the learning run is written
// there, one line each.
type whereAt struct {
	file string
	log  io.Writer
	// stopped reports whether the process was interrupted: runs that
	// end after it failed because the control plane went, and do not
	// count.
	stopped func() bool

	mu                        sync.Mutex
	what                      string
	runs, done, failed, shown int
	ended                     bool
}

// stage notes that the stage what, of runs runs, begins (Options.Stage).
func (w *whereAt) stage(what string, runs int) {
	if w.stopped() {
		// The runs of the stage an interrupt overtook failed, and
		// the exploration went on to the next: the interrupt is in
		// the stage it was in.
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.what, w.runs, w.done, w.failed = what, runs, 0, 0
	// The learning run comes first, and a failure of it says so itself.
	if w.log != nil && what != harness.ExploreStageLearning {
		fmt.Fprintf(w.log, "racekit explore: %s: %s (%s)\n", w.file, what, plural(runs, "run"))
	}
}

// progress notes the runs of the stage done so far (Options.Progress).
func (w *whereAt) progress(done, _, failed int) {
	if w.stopped() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done, w.failed = done, failed
}

// over notes that the exploration has ended: an interrupt after it
// interrupts no exploration of file.
func (w *whereAt) over() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ended = true
}

// interrupted says where the exploration was when it was interrupted, or
// "" when it had ended.
func (w *whereAt) interrupted() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.ended:
		return ""
	case w.what == "":
		return fmt.Sprintf("interrupted before the exploration of %s began", w.file)
	}
	return fmt.Sprintf("interrupted in %s of %s: %d of %s done, %d failed; no report is written", w.what, w.file, w.done, plural(w.runs, "run"), w.failed)
}

// plural renders n things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// progressLine is the line racekit explore keeps up to date on a terminal:
// how many runs have ended, of how many, how many failed, and how many end
// per second.
type progressLine struct {
	w     io.Writer
	now   func() time.Time
	start time.Time
}

// update redraws the line; Explore calls it after each run.
func (p *progressLine) update(done, total, failed int) {
	rate := ""
	if s := p.now().Sub(p.start).Seconds(); s > 0 {
		rate = ", " + strconv.FormatFloat(float64(done)/s, 'f', 1, 64) + " per second"
	}
	fmt.Fprintf(p.w, "\r\033[Kracekit explore: %d/%d interleavings, %d failed%s", done, total, failed, rate)
}

// clear erases the line, so that what follows starts at the margin.
func (p *progressLine) clear() { fmt.Fprint(p.w, "\r\033[K") }

// onTerminal reports whether w is a terminal, as racekit run finds out; a
// progress line is no color, so NO_COLOR does not turn it off.
func onTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
