package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/racekit/racekit/internal/assets"
	"github.com/racekit/racekit/internal/tail"
	"github.com/racekit/racekit/internal/watchdog"
)

// ControlPlane is one kube-apiserver and its etcd, started once per process
// and shared by every scenario; scenarios keep apart by namespace.
type ControlPlane struct {
	env *envtest.Environment
	// admin is the unrecorded superuser config the harness uses for its
	// own setup and for assertions, never for a scenario's actors.
	admin   *rest.Config
	dynamic dynamic.Interface
	// mapper knows the built-in resources and every CRD installed;
	// baseMapper, what discovery showed at start (crds.go).
	mapper     *swapMapper
	baseMapper meta.RESTMapper
	logs       *tail.Tail
	// root is the folder that holds etcd's data and the API server's
	// certificates (root.go); watchdog made it, and kills what runs from
	// it and removes it if this process dies without stopping them.
	root     string
	watchdog *watchdog.Watchdog

	// version is the release the API server says it is (its /version's
	// gitVersion without the v): what requires compares.
	version string

	mu      sync.Mutex
	users   map[string]*rest.Config
	signals chan os.Signal
	// starting is held while the processes start, so that a signal that
	// arrives meanwhile stops them once they are up instead of racing them.
	starting sync.Mutex
	// onInterrupt runs, last added first, before an interrupted process
	// exits; guarded by mu.
	onInterrupt []func()
	interrupted bool // a signal arrived; the handler will exit the process
	// stopping is set as Stop begins: Scratch makes no folder after it.
	stopping bool
	stop     sync.Once
	err      error
	// kill makes Stop kill the processes instead of letting them drain
	// (WithKillOnStop).
	kill bool

	// crds are the CRDs installed, by name, with where each came from;
	// crdMu serializes InstallCRDs.
	crdMu sync.Mutex
	crds  map[string]CRD

	// spawned kill the processes scenarios spawned and have not yet seen
	// exit, by Track's number (harness/running's spawn.go): run on an
	// interrupt and at Stop, so that no controller outlives the run.
	spawnMu sync.Mutex
	spawned map[int]func()
	spawnN  int

	// holds keep old revisions from being compacted while a scenario
	// still means to read them (revisions.go).
	holds RevisionHolds
}

// ErrStopped is what asks for the control plane's resources after Stop
// has begun get: a run an interrupt overtook fails by it, and reports
// nothing.
var ErrStopped = errors.New("the control plane is stopping")

// StartOption changes how Start starts.
type StartOption func(*startConfig)

type startConfig struct {
	noSignals, kill bool
	crds            []CRD
}

// WithCRDs installs crds as the control plane starts (InstallCRDs): the
// CRDs every scenario of the process needs. More can be installed later.
func WithCRDs(crds []CRD) StartOption {
	return func(c *startConfig) { c.crds = append(c.crds, crds...) }
}

// WithoutSignalHandler leaves SIGINT and SIGTERM to the caller: the handler
// would otherwise stop this control plane and end the process. A process
// that answers them itself, or starts a second control plane beside one
// that already has the handler (as the harness's crash test does), passes
// it, and must then Close the control plane on every path out.
func WithoutSignalHandler() StartOption {
	return func(c *startConfig) { c.noSignals = true }
}

// WithKillOnStop makes Stop kill kube-apiserver and etcd with SIGKILL
// instead of asking them to stop. Asked, the API server drains its HTTP/2
// connections for about a second; killed, both are gone in milliseconds.
// A fuzzing worker passes it: its coordinator sends SIGINT one second after
// asking it to stop, and SIGKILL one second later, and a worker killed while
// it waits for the API server would leave both processes behind. Only a
// control plane whose state nobody will read again may be killed.
func WithKillOnStop() StartOption {
	return func(c *startConfig) { c.kill = true }
}

// baseConfig carries what every client config shares. Scenarios must never
// wait on client-side throttling, and the recorder reads JSON.
func baseConfig() *rest.Config {
	return &rest.Config{
		QPS:   -1, // no client-side rate limiter
		Burst: 1000,
		ContentConfig: rest.ContentConfig{
			ContentType:        "application/json",
			AcceptContentTypes: "application/json",
		},
	}
}

// processStart bounds how long etcd and kube-apiserver may take to start,
// and to stop: each start ends as soon as the process is ready (envtest
// asks its health endpoint), so the bound only decides when a start that
// will never end is called failed. envtest's own, 20 s, was too short on a
// loaded 2-core machine (kube-apiserver took longer under busy loops on
// every core), and a test then failed by the machine's speed.
const processStart = 5 * time.Minute

// Start starts kube-apiserver and etcd from the binaries that
// assets.Find locates, installs the CRDs WithCRDs gives, and returns once
// the API server serves them. Call Stop when done; it also runs
// on SIGINT and SIGTERM, so that an interrupted run leaves no process behind.
// A process that dies without either (SIGKILL, a crash, an os.Exit) leaves
// none either: the control plane's watchdog, a process of its own started
// before anything else, kills kube-apiserver and etcd and removes their
// folder (internal/watchdog). A failed start returns the processes' output
// with the error.
func Start(ctx context.Context, opts ...StartOption) (*ControlPlane, error) {
	var cfg startConfig
	for _, o := range opts {
		o(&cfg)
	}
	dir, err := assets.Find()
	if err != nil {
		return nil, err
	}
	// Before the watchdog starts, which would otherwise hold the
	// inherited files open too.
	closeInheritedFiles()
	wd, err := newRoot()
	if err != nil {
		return nil, err
	}
	root := wd.Root()
	logs := tail.New(64 << 10)
	env := &envtest.Environment{
		BinaryAssetsDirectory: dir,
		ControlPlane: envtest.ControlPlane{
			APIServer: &envtest.APIServer{CertDir: filepath.Join(root, "kube-apiserver"), Out: logs.Prefixed("kube-apiserver"), Err: logs.Prefixed("kube-apiserver"),
				StartTimeout: processStart, StopTimeout: processStart},
			Etcd: &envtest.Etcd{DataDir: filepath.Join(root, "etcd"), Out: logs.Prefixed("etcd"), Err: logs.Prefixed("etcd"),
				StartTimeout: processStart, StopTimeout: processStart},
		},
	}
	configureAPIServer(env.ControlPlane.APIServer)
	cp := &ControlPlane{env: env, root: root, watchdog: wd, logs: logs, users: map[string]*rest.Config{}, kill: cfg.kill, crds: map[string]CRD{}}
	cp.starting.Lock()
	if !cfg.noSignals {
		stopOnSignal(cp)
	}
	_, err = env.Start()
	cp.noteServingCertDir()
	cp.starting.Unlock()
	if err != nil {
		_ = cp.Stop()
		return nil, fmt.Errorf("start control plane: %w\n--- control-plane output (last %d bytes) ---\n%s", err, logs.Size(), logs.String())
	}
	if cp.admin, err = cp.User("racekit-admin", "system:masters"); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	if cp.dynamic, err = dynamic.NewForConfig(cp.admin); err != nil {
		_ = cp.Stop()
		return nil, fmt.Errorf("admin client: %w", err)
	}
	mapper, err := newMapper(cp.admin)
	if err != nil {
		_ = cp.Stop()
		return nil, err
	}
	if cp.version, err = serverVersion(cp.admin); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	cp.baseMapper = mapper
	cp.mapper = newSwapMapper(mapper)
	if err := cp.InstallCRDs(ctx, cfg.crds); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	return cp, nil
}

// warmUp sends each custom resource a dry-run create. The API server
// prepares a CRD's storage and validation on the first list and the first
// write, which takes about two seconds each; paying that here keeps it out
// of the first scenario's timings. A dry run stores nothing.
func (cp *ControlPlane) warmUp(ctx context.Context, crds []*apiextensionsv1.CustomResourceDefinition) error {
	for _, crd := range crds {
		if crd.Spec.Scope == apiextensionsv1.ClusterScoped {
			continue
		}
		for _, v := range crd.Spec.Versions {
			gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Spec.Names.Plural}
			obj := &unstructured.Unstructured{}
			obj.SetAPIVersion(gvr.GroupVersion().String())
			obj.SetKind(crd.Spec.Names.Kind)
			obj.SetName("racekit-warm-up")
			c := cp.dynamic.Resource(gvr)
			_, err := c.Namespace(metav1.NamespaceDefault).Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil && !apierrors.IsInvalid(err) {
				return fmt.Errorf("warm up %s: %w", gvr, err)
			}
		}
	}
	return nil
}

// Stop stops the API server and etcd, removes their folders and ends the
// watchdog: quietly, if all went well, or else after it has killed what
// is left and removed the folders. It is safe to call more than once and
// from several goroutines.
func (cp *ControlPlane) Stop() error {
	cp.stop.Do(func() {
		cp.mu.Lock()
		cp.stopping = true
		kill := cp.kill // an interrupt sets it (stopOnSignal)
		cp.mu.Unlock()
		cp.killSpawned()
		if cp.signals != nil {
			signal.Stop(cp.signals)
			close(cp.signals)
		}
		if kill {
			cp.killProcesses()
		}
		// Runs still in flight (an interrupt stops the control plane
		// under them) may still write to their work folders: moved
		// aside first, the folders take no new file by their paths, and
		// the removal cannot meet one made while it reads (the watchdog
		// said "directory not empty").
		scripts := filepath.Join(cp.root, "scripts")
		if err := os.Rename(scripts, scripts+".stopped"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			cp.err = fmt.Errorf("move the scripts' folders aside: %w", err)
		}
		cp.err = errors.Join(cp.err, cp.env.Stop(), os.RemoveAll(cp.root))
		cp.err = errors.Join(cp.err, cp.watchdog.Stop(cp.err == nil))
	})
	return cp.err
}

// Close stops the control plane, like Stop, for a caller that is about to
// exit. If an interrupt is being handled, it waits for the handler to end
// the process, so that the run ends as interrupted and with the handler's
// cleanup done, instead of racing it to the exit.
func (cp *ControlPlane) Close() error {
	err := cp.Stop()
	cp.mu.Lock()
	interrupted := cp.interrupted
	cp.mu.Unlock()
	if interrupted {
		select {} // the handler calls os.Exit
	}
	return err
}

// Scratch returns a folder for the scripts run on cp to work in
// (testscript's work folders, which hold what their processes write),
// inside the folder the control plane keeps its own data in: it goes with
// the control plane, at Stop, at an interrupt (which exits without
// running the scripts' cleanup) and, when the process is killed, with
// the watchdog. An exploration interrupted in the middle of its runs left
// their work folders in TMPDIR.
//
// Once Stop has begun, Scratch refuses: a folder made then would outlive
// the removal, or break it.
func (cp *ControlPlane) Scratch() (string, error) {
	cp.mu.Lock()
	stopping := cp.stopping
	cp.mu.Unlock()
	if stopping {
		return "", fmt.Errorf("scratch folder: %w", ErrStopped)
	}
	dir := filepath.Join(cp.root, "scripts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("scratch folder: %w", err)
	}
	return dir, nil
}

// Output returns the last of what kube-apiserver and etcd wrote, for failure
// messages.
func (cp *ControlPlane) Output() string { return cp.logs.String() }

// serverVersion asks the API server which release it is. A binary built
// with the release stamped in (assets builds so) says it at /version's
// gitVersion. One built before that says only its major and minor there
// (from its source: component-base's DefaultKubeBinaryVersion), so the
// patch comes from the release whose folder the binaries were found in,
// which must agree on major and minor; from $KUBEBUILDER_ASSETS, the
// version is major.minor alone.
func serverVersion(cfg *rest.Config) (string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("discovery client: %w", err)
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return "", fmt.Errorf("ask the API server its version: %w", err)
	}
	return versionOf(*v, os.Getenv(assets.EnvVar) != "")
}

// versionOf is the release info says, as serverVersion reads it; fromEnv
// is set when the binaries came from $KUBEBUILDER_ASSETS.
func versionOf(info version.Info, fromEnv bool) (string, error) {
	if git := strings.TrimPrefix(info.GitVersion, "v"); stamped.MatchString(git) {
		return git, nil
	}
	minor := strings.TrimSuffix(info.Minor, "+")
	if info.Major == "" || minor == "" {
		return "", fmt.Errorf("the API server says no version (gitVersion %q, major %q, minor %q)", info.GitVersion, info.Major, info.Minor)
	}
	mm := info.Major + "." + minor
	if fromEnv {
		return mm, nil
	}
	rel, err := assets.Selected()
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(rel.Kubernetes+".", mm+".") {
		return "", fmt.Errorf("the API server says it is Kubernetes %s, but its binaries are in the folder of %s: rebuild them (remove the folder and run make envtest)", mm, rel.Kubernetes)
	}
	return rel.Kubernetes, nil
}

// stamped matches a release's version, as a build stamps it.
var stamped = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// Version returns the Kubernetes release the API server runs, as it says
// at /version ("1.37.2"): the release of the matrix the process selected
// (assets.ReleaseEnv).
func (cp *ControlPlane) Version() string { return cp.version }

// SelectRelease makes version ("1.35.4", one of assets.Releases) the
// release of the control planes this process starts, by setting
// assets.ReleaseEnv, which every process it spawns inherits too. Empty
// leaves the choice to the variable, or the default. A version that
// contradicts the variable is refused: one process runs one release.
func SelectRelease(version string) error {
	if strings.TrimSpace(version) == "" {
		_, err := assets.Selected()
		return err
	}
	rel, err := assets.ReleaseOf(version)
	if err != nil {
		return err
	}
	if cur := os.Getenv(assets.ReleaseEnv); cur != "" {
		if c, err := assets.ReleaseOf(cur); err != nil || c.Kubernetes != rel.Kubernetes {
			return fmt.Errorf("%s=%s, and Kubernetes %s is asked for: one process races one release; unset %s or ask for the same", assets.ReleaseEnv, cur, rel.Kubernetes, assets.ReleaseEnv)
		}
	}
	return os.Setenv(assets.ReleaseEnv, rel.Kubernetes)
}
