package racekit

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/racekit/racekit/harness"
)

// Env is racekit's control plane as a suite that racekit.Run does not drive
// holds it: a Ginkgo suite starts it in BeforeSuite (Start), its
// envtest-style specs make their clients from Config, its races play one
// scenario per spec (Play), and AfterSuite or DeferCleanup stops it (Stop).
// It needs no TestMain: the control plane stops with the last Env of the
// process, or when the process dies (its watchdog), whichever comes first.
type Env struct {
	// Config is the control plane's superuser config, as envtest's
	// Environment.Start returns it: for the suite's own clients. Calls
	// made through it are neither recorded nor held by any hook; a
	// scenario's actors get configs of their own.
	Config *rest.Config

	setup Setup
	opts  harness.ScriptOptions
	cp    *harness.ControlPlane

	mu      sync.Mutex
	stopped bool
}

// envs counts the Envs of the process that are started and not stopped;
// the control plane they share stops with the last one, unless Main owns
// it. Guarded by cpMu.
var envs int

// errNoEnv is what an Env's methods return on a nil Env: a suite whose
// BeforeSuite did not call Start, or whose Start failed.
var errNoEnv = errors.New("racekit: no control plane: call env, err := racekit.Start(setup) in BeforeSuite and check err before the specs use env")

// Start starts the process's control plane, or joins it when Main or
// another Env started it already, installs s's CRDs the control plane
// lacks, and returns the Env that plays s's scenarios. Every process of a
// parallel Ginkgo run (ginkgo -p) is a test process of its own and starts a
// control plane of its own: racekit's hooks sit in the transports of the
// process that runs the controllers, so its scenarios cannot race on
// another process's control plane.
func Start(s Setup) (*Env, error) {
	opts, c, err := s.shared(true)
	if err != nil {
		return nil, err
	}
	return &Env{Config: c.Admin(), setup: s, opts: opts, cp: c}, nil
}

// shared checks s, starts the process's control plane or joins it, and
// installs s's CRDs the control plane lacks; with env set it counts one
// more Env, which Stop lets go of. Without it (Runs, while Ginkgo builds
// its tree), the control plane is left up for the Start to come, and
// stops with it, or with the process.
func (s Setup) shared(env bool) (harness.ScriptOptions, *harness.ControlPlane, error) {
	opts, err := s.checkedOptions(false)
	if err != nil {
		return opts, nil, err
	}
	crds, err := s.ReadCRDs()
	if err != nil {
		return opts, nil, err
	}
	cpMu.Lock()
	defer cpMu.Unlock()
	if err := selectRelease(s.Kubernetes); err != nil {
		return opts, nil, err
	}
	if cp == nil {
		// A previous start's error is not kept: a suite that calls Start
		// again tries again.
		if cp, cpErr = harness.StartControlPlane(context.Background()); cpErr != nil {
			err := cpErr
			cp, cpErr = nil, nil
			return opts, nil, fmt.Errorf("racekit: start the control plane: %w", err)
		}
	}
	if err := cp.InstallCRDs(context.Background(), crds); err != nil {
		return opts, nil, errors.Join(fmt.Errorf("racekit: install the CRDs: %w", err), stopUnused())
	}
	if env {
		envs++
	}
	return opts, cp, nil
}

// stopUnused stops the control plane when no Env and no Main needs it;
// cpMu is held.
func stopUnused() error {
	if envs > 0 || mainRan || cp == nil {
		return nil
	}
	err := cp.Close()
	cp = nil
	if err != nil {
		return fmt.Errorf("racekit: stop the control plane: %w", err)
	}
	return nil
}

// Stop lets go of e's control plane, and stops it when e is the last Env
// of the process and Main does not own it. A second Stop does nothing.
func (e *Env) Stop() error {
	if e == nil {
		return errNoEnv
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return nil
	}
	e.stopped = true
	cpMu.Lock()
	defer cpMu.Unlock()
	envs--
	return stopUnused()
}

// Scenarios returns the names of the scenarios in s.Dir (testdata when
// empty), sorted, each as Play and go test -run name it: its file's name
// without .txtar. A Ginkgo suite builds one spec per name when it builds its
// tree, before BeforeSuite starts anything, so it reads them from the Setup.
func (s Setup) Scenarios() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(s.dir(), "*.txtar"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("racekit: no *.txtar scenario in %s", s.dir())
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = harness.ScenarioName(f)
	}
	sort.Strings(names)
	return names, nil
}

// Play runs the scenario called name (Scenarios) in e's Setup.Dir and
// returns its outcome, as racekit.Play does for each of a folder's: a
// scenario that fails is a Result whose Passed is false, not an error; the
// error is for a scenario that is not there or a stopped Env. When the
// Setup has an Output, the scenario's log and timeline go there as it ends.
func (e *Env) Play(name string) (Result, error) {
	if e == nil {
		return Result{}, errNoEnv
	}
	return e.play(name, e.opts)
}

// PlayRun runs the run called run (Setup.Runs) of the exploration in the
// scenario called name, alone after the exploration's learning run, and
// returns the scenario's outcome: its Explored report holds that run, and
// it passes when that run does. A run the exploration does not make is an
// error that names the runs it does make, never a pass of nothing.
func (e *Env) PlayRun(name, run string) (Result, error) {
	if e == nil {
		return Result{}, errNoEnv
	}
	file, err := e.setup.scenarioFile(name)
	if err != nil {
		return Result{}, err
	}
	explores, err := harness.ExploresFile(file)
	if err != nil {
		return Result{}, fmt.Errorf("racekit: play %s/%s: %w", name, run, err)
	}
	if !explores {
		return Result{}, fmt.Errorf("racekit: play %s/%s: %s explores nothing, so it has no runs (Setup.Runs lists none)", name, run, name)
	}
	opts := e.opts
	var mu sync.Mutex
	var names []string
	opts.ExploreSelect = func(n string) bool {
		mu.Lock()
		defer mu.Unlock()
		names = append(names, n)
		return n == run
	}
	opts.ExploreSelected = "the run " + run + " (racekit.Env.PlayRun)"
	r, err := e.play(name, opts)
	if err != nil {
		return r, err
	}
	mu.Lock()
	defer mu.Unlock()
	if names == nil || slices.Contains(names, run) {
		// The run was played; or the exploration failed before its runs
		// were known (the learning run, the script before it), or after
		// (an interferer that fails in every run): the outcome says why.
		return r, nil
	}
	return r, fmt.Errorf("racekit: play %s/%s: the exploration makes no run %s%s", name, run, run, Suggest(run, names))
}

// play runs the scenario called name with opts.
func (e *Env) play(name string, opts harness.ScriptOptions) (Result, error) {
	e.mu.Lock()
	stopped := e.stopped
	e.mu.Unlock()
	if stopped {
		return Result{}, fmt.Errorf("racekit: play %s: the Env is stopped", name)
	}
	file, err := e.setup.scenarioFile(name)
	if err != nil {
		return Result{}, err
	}
	results, err := playFiles(e.cp, opts, []string{file})
	if err != nil {
		return Result{}, err
	}
	if len(results) != 1 {
		return Result{}, fmt.Errorf("racekit: play %s: %d results, want 1", name, len(results))
	}
	r := results[0]
	if w := e.setup.Output; w != nil {
		fmt.Fprintf(w, "%s\n--- timeline of %s\n%s", r.Log, r.Name, r.Timeline())
	}
	return r, nil
}

// scenarioFile returns the file of the scenario called name in s.Dir,
// checked, or an error that names the scenarios there are.
func (s Setup) scenarioFile(name string) (string, error) {
	names, err := s.Scenarios()
	if err != nil {
		return "", err
	}
	if i := sort.SearchStrings(names, name); i == len(names) || names[i] != name {
		return "", fmt.Errorf("racekit: no scenario %s in %s%s", name, s.dir(), Suggest(name, names))
	}
	file := filepath.Join(s.dir(), name+".txtar")
	if err := harness.CheckScript(file); err != nil {
		return "", err
	}
	return file, nil
}

// Runs returns the names of the runs of the exploration in the scenario
// called name, in the order its report lists them, or none for a scenario
// with no explore line: a Ginkgo suite builds one spec per run, which
// Env.PlayRun plays, so that --focus picks one and the report shows each.
// An exploration's runs are known only after its learning run (its
// moments are the calls the workload made), and Ginkgo builds its tree
// before BeforeSuite, so Runs starts the process's control plane, or joins
// it, as Start does, and plays the scenario through its learning run with
// no run selected; the control plane stays up for BeforeSuite's Start,
// and stops with the last Env (or with the process, when no spec runs).
// With ginkgo -p each process builds its tree, and lists the runs on a
// control plane of its own: the learning run is deterministic, so every
// process lists the same runs, as it must (Ginkgo hands its processes
// specs by their place in the tree).
func (s Setup) Runs(name string) ([]string, error) {
	file, err := s.scenarioFile(name)
	if err != nil {
		return nil, err
	}
	explores, err := harness.ExploresFile(file)
	if err != nil || !explores {
		return nil, err
	}
	opts, c, err := s.shared(false)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	names := []string{}
	opts.ExploreSelect = func(n string) bool {
		mu.Lock()
		defer mu.Unlock()
		names = append(names, n)
		return false
	}
	opts.ExploreSelected = "none: the runs listed (racekit.Setup.Runs)"
	results, err := playFiles(c, opts, []string{file})
	if err != nil {
		return nil, err
	}
	if len(results) != 1 || !results[0].Passed {
		log := ""
		if len(results) == 1 {
			log = results[0].Log
		}
		return nil, fmt.Errorf("racekit: list the runs of %s: its learning run failed:\n%s", name, log)
	}
	mu.Lock()
	defer mu.Unlock()
	return names, nil
}

// Timeline renders the trace of r's run as racekit run and
// -racekit.timeline print it: one numbered row per call, for people, with
// the lists, watches and discovery reads of an actor whose reads span more
// than 20 resources (kube-controller-manager's informers) folded into one
// line.
func (r Result) Timeline() string { return harness.Timeline(r.Trace.Rows(), false) }

// TimelineUnfolded renders the trace of r's run as Timeline does, with
// every call on a line of its own, as racekit run --unfold prints it.
func (r Result) TimelineUnfolded() string { return harness.TimelineUnfolded(r.Trace.Rows(), false) }
