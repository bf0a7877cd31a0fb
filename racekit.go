// Package racekit races your Kubernetes controllers against a real
// kube-apiserver: it makes optimistic-concurrency races happen on purpose,
// at the moment a scenario chooses, and checks what the controller did
// about them.
//
// A project's test registers its CRDs and controllers and runs its
// scenarios, *.txtar files in the scenario language (docs/
// scenario-language.md):
//
//	func TestMain(m *testing.M) { racekit.Main(m) }
//
//	func TestRaces(t *testing.T) {
//		racekit.Run(t, racekit.Setup{
//			Dir:  "testdata/races",
//			CRDs: []string{"../../config/crd/bases"},
//			Controllers: []*racekit.Controller{
//				racekit.Reconciler("memcached", scheme, &cachev1alpha1.Memcached{},
//					func(c client.Client) reconcile.Reconciler {
//						return &MemcachedReconciler{Client: c, Scheme: scheme}
//					}),
//			},
//		})
//	}
//
// The control plane (etcd and kube-apiserver, through envtest) starts once
// per test process, on the first Run; Main stops it when the tests end.
package racekit

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/rogpeppe/go-internal/testscript"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/racekit/racekit/harness"
	"github.com/racekit/racekit/harness/controllers"
	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/referee"
)

// The types a project's test and its own commands use; each is documented
// where it is defined: in package harness, or in the layer that the façade
// does not name itself (Span, Finding).
type (
	// Controller is a controller scenarios race, by name.
	Controller = harness.Controller
	// Instance is a controller as one actor runs it in one scenario.
	Instance = harness.Instance
	// Command is a scenario command of a project's own.
	Command = harness.Command
	// Invocation is one call of a Command.
	Invocation = harness.Invocation
	// Scenario is one running scenario, as a Command sees it.
	Scenario = harness.Scenario
	// Span is the part of the trace one reconcile made.
	Span = controllers.Span
	// Finding is one rule a reconcile broke.
	Finding = referee.Finding
	// CRD is a CustomResourceDefinition read from a file.
	CRD = harness.CRD
	// ScriptOptions configures a run of scenarios without Run.
	ScriptOptions = harness.ScriptOptions
	// ExploreReport is what an exploration found: its moments and each
	// run's hooks, verdict and failures, as values.
	ExploreReport = harness.ExploreReport
	// Interleaving is one run of an exploration: its hooks (each a moment
	// and an interferer), its verdict and its failures.
	Interleaving = harness.Interleaving
	// Moment is a point of a workload's calls an exploration hooks.
	Moment = harness.Moment
	// Difference is one way an explore auto plan's run ended unlike the
	// reference runs (Interleaving.Differences): its kind (field, object,
	// history or failure), the object, the field, and the two values.
	Difference = harness.Difference
	// Failure is one thing that went wrong in a scenario's run, as
	// values: its kind, file:line, command, message, and, for a claim
	// that does not hold, what it claimed, wanted and got.
	Failure = harness.Failure
	// NoiseCheck is what CheckNoise found for one scenario.
	NoiseCheck = harness.NoiseCheck
	// Row is one line of a run's trace as values (Interleaving.Trace's
	// Rows, Result.Trace's), its resourceVersions and uids named in order
	// of first appearance, for a test that checks how a run went.
	Row = harness.Row
	// ViewChange is a row's change of a view: a hold, a release, a
	// stale list, or a mark (Row.View).
	ViewChange = harness.ViewChange
)

// MetricsAddr is what $METRICS_ADDR holds in a scenario, for a Command
// that sets a script variable holding a program's flags: spawn, given
// metrics=$METRICS_ADDR, puts a free port of loopback in its place, and
// idle then settles the process by its workqueues (harness.MetricsAddr).
const MetricsAddr = harness.MetricsAddr

// InstanceOf returns the instance of the controller called controller that
// runs as actor in sc, once it has reconciled there: for a Command that
// reads a controller's own counters.
func InstanceOf(sc *Scenario, controller, actor string) (*Instance, bool) {
	return controllers.InstanceOf(sc, controller, actor)
}

// ZeroDelayRetry is retry.DefaultRetry without the waiting: the same number
// of attempts, and no delay, since hooks, not time, order a race. A
// controller whose backoff can be set should get it in scenarios.
func ZeroDelayRetry() wait.Backoff { return language.ZeroDelayRetry() }

// AsActor reads the optional "as ACTOR" that ends a Command's arguments;
// without it, the actor is controller.
func AsActor(args []string) (string, error) { return language.AsActor(args) }

// Suggest returns " (did you mean X?)" for a near miss of name among
// candidates, or "": for a Command's usage errors.
func Suggest(name string, candidates []string) string { return language.Suggest(name, candidates) }

// UsageError returns an error about a Command's arguments; the failure
// message adds the command's usage line.
func UsageError(format string, args ...any) error { return language.UsageError(format, args...) }

// NamingRules returns err with the rules it names broken as values, for a
// Command whose failure names them as a failed reconcile does: judges of a
// run, such as CheckNoise and explore's table, read the findings, not the
// message.
func NamingRules(err error, fs ...Finding) error { return referee.NamingRules(err, fs...) }

// Setup is what a project races: where its scenarios are, its CRDs, its
// controllers and its own commands.
type Setup struct {
	// Dir holds the *.txtar scenarios; "" means testdata.
	Dir string
	// CRDs are files or folders of CRD YAML, such as a kubebuilder
	// project's config/crd/bases, relative to the test's package.
	CRDs []string
	// CRDFS holds more CRDs, every YAML or JSON file in it: for CRDs
	// embedded with go:embed.
	CRDFS fs.FS
	// Controllers are what scenarios reconcile, by name.
	Controllers []*Controller
	// Commands are the project's own scenario commands.
	Commands []*Command
	// WaitTimeout bounds every wait for what runs on its own (await,
	// idle, ended, and spawn's wait for a fixed port another racekit
	// process holds) unless a line says within=; zero means 30 s. A slow
	// machine may need more; a verdict never depends on it, only how long
	// a scenario that is going to fail takes to say so.
	WaitTimeout time.Duration
	// ExploreParallel bounds the interleavings of an exploration that run
	// at once; zero means four per CPU. Runs that need the same fixed
	// port take turns for it whatever the number.
	ExploreParallel int
	// ExploreShrink makes each confirmed finding's regression scenario of
	// an explore auto exploration (Interleaving.Emit) smaller: its setup
	// lines and workload commands are left out, one at a time, while it
	// still fails at its claim and its neutral twin passes. It costs two
	// runs a line tried; racekit explore --emit does it.
	ExploreShrink bool
	// Kubernetes is the release the process's control plane runs, one of
	// racekit's release matrix ("1.35.4"); empty means $RACEKIT_KUBERNETES,
	// or the default, 1.37.2. One control plane serves a test process, so
	// every Setup of the process names the same release, or none. A
	// scenario that needs a release says so itself (requires
	// kubernetes>=1.35) and is skipped on another.
	Kubernetes string
	// Output, if set, is where Env.Play writes each scenario's log and
	// timeline as it ends: GinkgoWriter in a Ginkgo suite, which shows it
	// with a failed spec, or always under -v.
	Output io.Writer
}

// Option changes a Controller that Reconciler or ClientGo builds.
type Option func(*Controller)

// Cached makes the controller read objs' kinds from informers, as a
// manager's client does: the informers LIST and WATCH through the same
// hooks and recorder as everything else, and before each reconcile the
// cache takes in every write the scenario made (hold and release hold it
// back on purpose).
func Cached(objs ...client.Object) Option {
	return func(c *Controller) { c.Cache = append(c.Cache, objs...) }
}

// Summary sets the one line help shows for the controller.
func Summary(s string) Option {
	return func(c *Controller) { c.Summary = s }
}

// Reconciler registers a controller-runtime reconciler that reconciles
// kinds like forObj, built by build from the client racekit hands it: the
// client of a kubebuilder project's FooReconciler{Client, Scheme}. build
// runs once per actor and scenario.
func Reconciler(name string, scheme *runtime.Scheme, forObj client.Object, build func(c client.Client) reconcile.Reconciler, opts ...Option) *Controller {
	c := &Controller{Name: name, Scheme: scheme, For: forObj,
		New: func(in *Instance) (reconcile.Reconciler, error) { return build(in.Client), nil }}
	for _, o := range opts {
		o(c)
	}
	return c
}

// SyncFunc is a plain client-go controller's sync of one object, as its
// workqueue worker calls it.
type SyncFunc func(ctx context.Context, key types.NamespacedName) error

// ClientGo registers a controller written with client-go alone, which
// reconciles kinds like forObj: build makes its clientsets from cfg (every
// call through racekit's hooks and recorder) and returns its sync function.
// A sync that returns an error is requeued, as its workqueue would.
func ClientGo(name string, scheme *runtime.Scheme, forObj client.Object, build func(cfg *rest.Config) (SyncFunc, error), opts ...Option) *Controller {
	c := &Controller{Name: name, Scheme: scheme, For: forObj,
		New: func(in *Instance) (reconcile.Reconciler, error) {
			sync, err := build(in.Config)
			if err != nil {
				return nil, err
			}
			if sync == nil {
				return nil, fmt.Errorf("build returned no sync function")
			}
			return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				return reconcile.Result{}, sync(ctx, req.NamespacedName)
			}), nil
		}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// The control plane of the test process, started by the first Run.
var (
	cpMu    sync.Mutex
	cp      *harness.ControlPlane
	cpErr   error
	mainRan bool
)

// timelineFlag prints each scenario's timeline: go test -run
// 'TestRaces/NAME$' -v -args -racekit.timeline.
const timelineFlag = "racekit.timeline"

// Main runs the tests of m and stops the control plane when they end. Call
// it from TestMain; Run refuses to start a control plane without it, which
// would outlive the test process. It defines the -update flag (rewrite
// golden sections) unless the test binary has one, and -racekit.timeline,
// which prints each scenario's timeline of the race, as racekit run does.
func Main(m *testing.M) {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the scenarios' golden sections with what this run produced")
	}
	if flag.Lookup(timelineFlag) == nil {
		flag.Bool(timelineFlag, false, "print each scenario's timeline of the race to standard output")
	}
	flag.Parse()
	// envtest logs through controller-runtime's logger; unset, it warns
	// on stderr after 30 s.
	ctrllog.SetLogger(logr.Discard())
	cpMu.Lock()
	mainRan = true
	cpMu.Unlock()
	code := m.Run()
	cpMu.Lock()
	defer cpMu.Unlock()
	if cp != nil {
		if err := cp.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "racekit: stop the control plane: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// controlPlane returns the process's control plane, started on first use,
// of the release s asks for.
func controlPlane(s Setup) (*harness.ControlPlane, error) {
	cpMu.Lock()
	defer cpMu.Unlock()
	if err := selectRelease(s.Kubernetes); err != nil {
		return nil, err
	}
	if !mainRan && envs == 0 {
		return nil, fmt.Errorf("racekit.Run needs racekit.Main: add func TestMain(m *testing.M) { racekit.Main(m) } to the test package, so that the control plane stops with the tests (or, in a suite of your own such as Ginkgo's, racekit.Start and Env.Play)")
	}
	if cp == nil && cpErr == nil {
		cp, cpErr = harness.StartControlPlane(context.Background())
	}
	return cp, cpErr
}

// Run runs every scenario in s.Dir as a subtest of t (go test -run
// 'TestX/NAME$' selects one), on the process's control plane, with s's
// CRDs installed (once per process) and s's controllers and commands
// registered. -update rewrites the scenarios' golden sections.
func Run(t *testing.T, s Setup) {
	t.Helper()
	opts, err := s.options()
	if err != nil {
		t.Fatal(err)
	}
	c, err := controlPlane(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := install(c, s); err != nil {
		t.Fatal(err)
	}
	params, err := harness.Params(context.Background(), c, opts)
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, params)
}

// Result is the outcome of one scenario that Play ran, as values: whether
// it passed, its failures (each with its kind, file:line, command, message
// and rules broken), its verdicts and trace, and, for a scenario with an
// explore line, what the exploration found.
type Result struct {
	harness.Result
	// Explored is the report of the scenario's exploration; nil for a
	// scenario without an explore line, or whose exploration could not
	// run (its failure says why).
	Explored *ExploreReport
	// Want is what the scenario's header says it must do (# want: ...),
	// nil when it says nothing; Expect checks it.
	Want *Want
}

// Play runs every scenario in s.Dir, as Run does, one after another, and
// returns each one's outcome instead of failing a test: for a test that
// expects a scenario to fail, such as one that shows that a scenario
// catches a bug. Like Run, it needs Main. It never rewrites golden
// sections.
func Play(s Setup) ([]Result, error) {
	opts, err := s.options()
	if err != nil {
		return nil, err
	}
	c, err := controlPlane(s)
	if err != nil {
		return nil, err
	}
	if err := install(c, s); err != nil {
		return nil, err
	}
	// testscript reads Files only without a Dir; options found at least one.
	files, err := filepath.Glob(filepath.Join(opts.Dir, "*.txtar"))
	if err != nil {
		return nil, err
	}
	return playFiles(c, opts, files)
}

// playFiles runs files one after another on c, with opts, and returns each
// one's outcome with its exploration and its header's want.
func playFiles(c *harness.ControlPlane, opts harness.ScriptOptions, files []string) ([]Result, error) {
	var mu sync.Mutex
	explored := map[string]*ExploreReport{}
	done := opts.Done
	opts.Done = func(sc *Scenario) {
		if rep := harness.Explored(sc); rep != nil {
			mu.Lock()
			explored[sc.Name] = rep
			mu.Unlock()
		}
		if done != nil {
			done(sc)
		}
	}
	wants := map[string]*Want{}
	for _, f := range files {
		w, err := headerWant(f)
		if err != nil {
			return nil, err
		}
		wants[harness.ScenarioName(f)] = w
	}
	opts.Dir, opts.Files, opts.UpdateScripts = "", files, false
	var out []Result
	for _, r := range harness.RunFiles(context.Background(), c, opts) {
		out = append(out, Result{Result: r, Explored: explored[r.Name], Want: wants[r.Name]})
	}
	return out, nil
}

// ScriptOptions returns the options that run s's scenario files on a
// control plane of one's own (racekit run does), once it has s's CRDs
// (ReadCRDs): s's controllers and commands, checked.
func (s Setup) ScriptOptions() (ScriptOptions, error) {
	opts := harness.ScriptOptions{Dir: s.Dir, Controllers: s.Controllers, Commands: s.Commands,
		WaitTimeout: s.WaitTimeout, ExploreParallel: s.ExploreParallel, ExploreShrink: s.ExploreShrink}
	return opts, opts.Check()
}

// dir is the folder of s's scenarios.
func (s Setup) dir() string {
	if s.Dir == "" {
		return "testdata"
	}
	return s.Dir
}

// options checks s and returns the harness's options for it.
func (s Setup) options() (harness.ScriptOptions, error) { return s.checkedOptions(true) }

// checkedOptions checks s and every scenario in its folder, which must hold
// one when needScenarios is set, and returns the harness's options for it.
func (s Setup) checkedOptions(needScenarios bool) (harness.ScriptOptions, error) {
	dir := s.dir()
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		return harness.ScriptOptions{}, err
	}
	if len(files) == 0 && needScenarios {
		return harness.ScriptOptions{}, fmt.Errorf("racekit: no *.txtar scenario in %s", dir)
	}
	for _, f := range files {
		if err := harness.CheckScript(f); err != nil {
			return harness.ScriptOptions{}, err
		}
	}
	opts := harness.ScriptOptions{Dir: dir, Controllers: s.Controllers, Commands: s.Commands,
		WaitTimeout: s.WaitTimeout, ExploreParallel: s.ExploreParallel, ExploreShrink: s.ExploreShrink}
	if f := flag.Lookup("update"); f != nil {
		opts.UpdateScripts = f.Value.String() == "true"
	}
	if f := flag.Lookup(timelineFlag); f != nil && f.Value.String() == "true" {
		opts.Done = printTimeline
	}
	return opts, opts.Check()
}

// install reads s's CRDs and installs those the control plane lacks.
func install(c *harness.ControlPlane, s Setup) error {
	crds, err := s.ReadCRDs()
	if err != nil {
		return err
	}
	return c.InstallCRDs(context.Background(), crds)
}

// ReadCRDs reads s's CRDs, from CRDs and CRDFS.
func (s Setup) ReadCRDs() ([]CRD, error) {
	var crds []harness.CRD
	if len(s.CRDs) > 0 {
		got, err := harness.ReadCRDs(s.CRDs...)
		if err != nil {
			return nil, err
		}
		crds = append(crds, got...)
	}
	if s.CRDFS != nil {
		got, err := harness.ReadCRDsFS(s.CRDFS)
		if err != nil {
			return nil, err
		}
		crds = append(crds, got...)
	}
	return crds, nil
}

// printTimeline prints sc's timeline, in one write, so that the scenarios
// running in parallel do not interleave their lines.
func printTimeline(sc *Scenario) {
	fmt.Fprintf(os.Stdout, "--- timeline of %s\n%s", sc.Name, harness.Timeline(sc.Trace().Rows(), false))
}

// selectRelease makes version the release of the process's control plane,
// or checks that the one running is it; cpMu is held.
func selectRelease(version string) error {
	if err := harness.SelectRelease(version); err != nil {
		return fmt.Errorf("racekit: %w", err)
	}
	if cp == nil || version == "" {
		return nil
	}
	if running := cp.Version(); !strings.HasPrefix(running+".", strings.TrimPrefix(version, "v")+".") {
		return fmt.Errorf("racekit: the process's control plane runs Kubernetes %s, and a Setup asks for %s: one control plane serves a test process", running, version)
	}
	return nil
}
