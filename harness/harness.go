package harness

import (
	"context"
	"io/fs"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/racekit/racekit/harness/auto"
	"github.com/racekit/racekit/harness/controllers"
	"github.com/racekit/racekit/harness/controlplane"
	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/proxy"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/harness/running"
	"github.com/racekit/racekit/harness/selfcheck"
	"github.com/racekit/racekit/harness/semantics"
	"github.com/racekit/racekit/harness/views"
)

// The types the public API and the command use; each is documented where
// it is defined.
type (
	ControlPlane   = controlplane.ControlPlane
	StartOption    = controlplane.StartOption
	CRD            = controlplane.CRD
	Scenario       = language.Scenario
	Actor          = language.Actor
	Command        = language.Command
	Invocation     = language.Invocation
	Negation       = language.Negation
	Result         = language.Result
	Failure        = language.Failure
	FailureKind    = language.FailureKind
	FailedHook     = language.FailedHook
	Verdict        = language.Verdict
	Controller     = controllers.Controller
	Instance       = controllers.Instance
	Trace          = record.Trace
	Row            = record.Row
	ViewChange     = record.ViewChange
	Exchange       = record.Exchange
	ExploreReport  = explore.Report
	ExploreOptions = explore.Options
	Interleaving   = explore.Interleaving
	Moment         = explore.Moment
	Hook           = explore.Hook
	ExploreRefusal = explore.Refusal
	Race           = explore.Race
	Outcome        = explore.Outcome
	Watcher        = explore.Watcher
	Difference     = explore.Difference
	AutoSummary    = explore.AutoSummary
	Twin           = selfcheck.Twin
	NoiseCheck     = selfcheck.NoiseCheck
	PruningCheck   = selfcheck.PruningCheck
)

// ExploreStageLearning is the stage an exploration begins with, its
// learning run (ExploreOptions.Stage).
const ExploreStageLearning = explore.StageLearning

// The values the public API and the command use.
const (
	FailCommand       = language.FailCommand
	FailHookAction    = language.FailHookAction
	FailUnfired       = language.FailUnfired
	FailHalted        = language.FailHalted
	NoNegation        = language.NoNegation
	NegAPIError       = language.NegAPIError
	NegSelf           = language.NegSelf
	ControllerActor   = language.ControllerActor
	SetupActor        = language.SetupActor
	MaxExploreDepth   = explore.MaxDepth
	MaxSummary        = language.MaxSummary
	AnonymousActor    = running.AnonymousActor
	SpawnedKubeconfig = running.SpawnedKubeconfig
)

// StartControlPlane starts kube-apiserver and etcd (controlplane.Start).
func StartControlPlane(ctx context.Context, opts ...StartOption) (*ControlPlane, error) {
	return controlplane.Start(ctx, opts...)
}

// SelectRelease makes version the Kubernetes release of the control planes
// the process starts (controlplane.SelectRelease).
func SelectRelease(version string) error { return controlplane.SelectRelease(version) }

// WithCRDs installs crds as the control plane starts.
func WithCRDs(crds []CRD) StartOption { return controlplane.WithCRDs(crds) }

// WithoutSignalHandler leaves SIGINT and SIGTERM to the caller.
func WithoutSignalHandler() StartOption { return controlplane.WithoutSignalHandler() }

// WithKillOnStop makes Stop kill kube-apiserver and etcd.
func WithKillOnStop() StartOption { return controlplane.WithKillOnStop() }

// ReadCRDs reads the CRDs in files and folders of YAML or JSON.
func ReadCRDs(paths ...string) ([]CRD, error) { return controlplane.ReadCRDs(paths...) }

// ReadCRDsFS reads every CRD in fsys.
func ReadCRDsFS(fsys fs.FS) ([]CRD, error) { return controlplane.ReadCRDsFS(fsys) }

// AdoptOrphans makes this process the reaper of its descendants' orphans
// (controlplane.AdoptOrphans).
func AdoptOrphans() (func() error, error) { return controlplane.AdoptOrphans() }

// PeakRSS returns the peak resident memory of this process's control-plane
// children, by command name.
func PeakRSS() (map[string]int64, error) { return controlplane.PeakRSS() }

// CheckScript reports a scenario file that testscript could not read.
func CheckScript(file string) error { return language.CheckScript(file) }

// ScenarioName is the name testscript gives a file.
func ScenarioName(file string) string { return language.ScenarioName(file) }

// Timeline renders rows as a numbered table for people, an actor's many
// background reads (kube-controller-manager's informers) folded into a line.
func Timeline(rows []Row, color bool) string { return record.Timeline(rows, color) }

// TimelineUnfolded renders rows as Timeline does, with no row folded.
func TimelineUnfolded(rows []Row, color bool) string { return record.TimelineUnfolded(rows, color) }

// Mermaid renders rows as a Mermaid sequence diagram, background reads
// folded as in Timeline.
func Mermaid(rows []Row) string { return record.Mermaid(rows) }

// MermaidUnfolded renders rows as Mermaid does, with no row folded.
func MermaidUnfolded(rows []Row) string { return record.MermaidUnfolded(rows) }

// JSON renders rows as an indented JSON array, for tools.
func JSON(rows []Row) (string, error) { return record.JSON(rows) }

// Merge joins the reports of an exploration's shards.
func Merge(shards ...*ExploreReport) (*ExploreReport, error) { return explore.Merge(shards...) }

// ExploresFile reports whether the scenario in file has an explore line.
func ExploresFile(file string) (bool, error) { return explore.FileHasExploreLine(file) }

// Explored returns what the scenario's explore line found, or nil.
func Explored(sc *Scenario) *ExploreReport { return explore.Explored(sc) }

// RanOnItsOwn reports whether a controller or process ran on its own in
// the scenario (start, spawn).
func RanOnItsOwn(sc *Scenario) bool { return running.RanOnItsOwn(sc) }

// NewScenario creates a scenario outside a script, in a namespace of its
// own, whose archive files are in dir: racekit proxy's, whose actors are
// people and their controllers.
func NewScenario(ctx context.Context, cp *ControlPlane, name, dir string) (*Scenario, error) {
	return language.NewScenario(ctx, cp, name, dir)
}

// Proxy returns the scenario's racing proxy, started on first use.
func Proxy(sc *Scenario) (*proxy.Server, error) { return running.Proxy(sc) }

// WriteKubeconfig writes a kubeconfig to path with which a client reaches
// the scenario's racing proxy as actor.
func WriteKubeconfig(sc *Scenario, actor, path string) error {
	return running.WriteKubeconfig(sc, actor, path)
}

// ScriptOptions configures Params, RunFiles and Explore: the scenarios to
// run, how, and the controllers and commands they may use. Its first
// fields are the scenario language's options, which Language passes on as
// they are; language.Options says what each does.
type ScriptOptions struct {
	// Dir and Files are the scenarios (language.Options.Dir, Files);
	// UpdateScripts rewrites their golden sections; Done is called with
	// each scenario when its script ends; HookTimeout bounds each hook
	// action (zero: DefaultHookTimeout), and WaitTimeout each wait for what
	// runs on its own (zero: DefaultWait); VerifyReads checks each answer
	// the trace gives an assertion against a GET, for racekit's own tests.
	Dir           string
	Files         []string
	UpdateScripts bool
	Done          func(sc *Scenario)
	HookTimeout   time.Duration
	VerifyReads   bool
	WaitTimeout   time.Duration
	// ExploreParallel bounds the interleavings of an exploration that run
	// at once; zero means DefaultExploreParallel (four per CPU).
	ExploreParallel int
	// ExploreShrink shrinks the regression scenario of each explore auto
	// finding (ExploreOptions.Shrink).
	ExploreShrink bool
	// ExploreSelect, if set, runs only the runs of an exploration whose
	// names it accepts (go test's -run and -skip select otherwise);
	// ExploreSelected says how, for the report (explore.Settings).
	ExploreSelect   func(run string) bool
	ExploreSelected string
	// Controllers are the controllers scenarios may reconcile, by name.
	Controllers []*Controller
	// Commands are scenario commands beside the built-in ones: the
	// assertions of a controller's own domain. help and the language
	// reference show them (Commands).
	Commands []*Command
}

// DefaultHookTimeout bounds a hook action that blocks.
const DefaultHookTimeout = language.DefaultHookTimeout

// OutcomeOf returns an interleaving's outcome, as the HTML page colours
// it.
func OutcomeOf(il Interleaving) Outcome { return explore.OutcomeOf(il) }

// FoundTrace is the section of an emitted regression scenario that holds
// the failing run's trace.
const FoundTrace = explore.FoundTrace

// SettledByWorkqueue, SettledByGoroutines, SettledByExit and
// SettledByQuiet are the evidence idle names in the trace (Row.Settled).
const (
	SettledByExit       = record.SettledByExit
	SettledByGoroutines = record.SettledByGoroutines
	SettledByWorkqueue  = record.SettledByWorkqueue
	SettledByQuiet      = record.SettledByQuiet
)

// DefaultWait bounds await and idle.
const DefaultWait = running.DefaultWait

// MetricsAddr is what $METRICS_ADDR holds in a scenario: spawn, given
// metrics=$METRICS_ADDR, puts a free port of loopback in its place on its
// line and in the process's environment, and idle reads the process's
// workqueues there. A Command that sets a script variable holding a
// program's flags uses it where the address goes, since a variable's
// value is not expanded again.
const MetricsAddr = running.MetricsPlaceholder

// DefaultExploreParallel is how many interleavings of an exploration run
// at once unless told: four per CPU.
func DefaultExploreParallel() int { return explore.DefaultParallel() }

// Language returns the scenario language's options for o: the extensions
// of every layer, with o's controllers and commands.
//
// On an error, the options still name o's scenarios, so that a run with
// them fails each one with the error rather than running none.
func (o ScriptOptions) Language() (language.Options, error) {
	lo := language.Options{
		Dir: o.Dir, Files: o.Files, UpdateScripts: o.UpdateScripts, Done: o.Done,
		HookTimeout: o.HookTimeout, VerifyReads: o.VerifyReads, WaitTimeout: o.WaitTimeout,
		Commands: o.Commands,
	}
	registry, err := controllers.Registry(o.Controllers)
	lo.Extensions = extensions(controllers.Extension(registry, err), explore.Settings{Parallel: o.ExploreParallel, Auto: auto.Explore, Shrink: o.ExploreShrink,
		Select: o.ExploreSelect, Selected: o.ExploreSelected})
	if err != nil {
		return lo, err
	}
	return lo, lo.Check()
}

// extensions are the layers above the language, in the order their seams
// run (End, last first): views before running, so that what a hold found
// at the end follows what halting the running controllers found.
func extensions(ctrls *language.Extension, xs explore.Settings) []*language.Extension {
	return []*language.Extension{semantics.Extension(), ctrls, views.Extension(running.ActorOf), running.Extension(), explore.Extension(xs), auto.Extension()}
}

// Check reports a controller or command that cannot be used: a name given
// twice, a missing field. Params fails every scenario with it; check first
// to fail once.
func (o ScriptOptions) Check() error {
	_, err := o.Language()
	return err
}

// Commands returns every built-in scenario command and extra, grouped as
// help shows them: what a run with ScriptOptions.Commands extra offers.
func Commands(extra ...*Command) []*Command {
	all, _ := language.Table(extensions(controllers.Extension(nil, nil), explore.Settings{}), nil)
	for _, c := range all {
		if c.Hidden {
			delete(all, c.Name)
		}
	}
	for _, c := range extra {
		all[c.Name] = c
	}
	return language.Sorted(all)
}

// Params returns testscript parameters that run scenarios on cp with o:
// each script gets its own Scenario, and every command. It fails once cp
// is stopping: the scripts' work folder goes inside cp's.
func Params(ctx context.Context, cp *ControlPlane, o ScriptOptions) (testscript.Params, error) {
	// An error in o fails every scenario as it starts (the extensions'
	// Setup), so that none runs, and none passes.
	lo, _ := o.Language()
	return language.Params(ctx, cp, lo)
}

// RunFiles runs the scenario files o names (o.Files) one after another on
// cp and returns a Result for each, in order: how racekit run plays
// scenarios without go test.
func RunFiles(ctx context.Context, cp *ControlPlane, o ScriptOptions) []Result {
	lo, _ := o.Language() // an error fails each scenario, as Params
	return language.RunFiles(ctx, cp, lo)
}

// Explore explores the scenario in file on cp with o's controllers and
// commands (explore.Explore).
func Explore(ctx context.Context, cp *ControlPlane, o ScriptOptions, file string, xo ExploreOptions) (*ExploreReport, error) {
	lo, err := o.Language()
	if err != nil {
		return nil, err
	}
	if xo.Parallel == 0 {
		xo.Parallel = o.ExploreParallel
	}
	xo.Shrink = xo.Shrink || o.ExploreShrink
	xo.Auto = auto.Explore
	return explore.Explore(ctx, cp, lo, file, xo)
}

// CheckExplore reports what is wrong with the explore scenario in file
// before anything runs, as Explore would report it.
func CheckExplore(o ScriptOptions, file string) error {
	lo, err := o.Language()
	if err != nil {
		return err
	}
	if err := explore.Check(lo, file); err != nil {
		return err
	}
	a, err := explore.ParseAuto(lo, file)
	if err != nil || a == nil {
		return err
	}
	return auto.Check(a)
}

// CheckPruning compares an exploration with its moments left out to the
// same exploration of every moment (selfcheck.CheckPruning).
func CheckPruning(pruned, whole *ExploreReport) PruningCheck {
	return selfcheck.CheckPruning(pruned, whole)
}

// CheckNoise runs the scenario in file plainly and with noise that cannot
// matter, and compares their verdicts (selfcheck.CheckNoise).
func CheckNoise(ctx context.Context, cp *ControlPlane, o ScriptOptions, file string) (*NoiseCheck, error) {
	lo, err := o.Language()
	if err != nil {
		return nil, err
	}
	return selfcheck.CheckNoise(ctx, cp, lo, file)
}

// FailingTwins returns the failing twins in dir of the assertion commands
// names (selfcheck.FailingTwins).
func FailingTwins(dir string, names []string) ([]Twin, error) {
	return selfcheck.FailingTwins(dir, names)
}

// CheckTwin runs tw on cp with o and returns nil when it fails as a failing
// twin must.
func CheckTwin(ctx context.Context, cp *ControlPlane, o ScriptOptions, tw Twin) error {
	lo, err := o.Language()
	if err != nil {
		return err
	}
	return tw.Check(ctx, cp, lo)
}
