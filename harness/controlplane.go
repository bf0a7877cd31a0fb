package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"syscall"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/racekit/racekit/internal/assets"
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
	logs       *tail
	// root is the folder that holds etcd's data and the API server's
	// certificates (root.go); watchdog made it, and kills what runs from
	// it and removes it if this process dies without stopping them.
	root     string
	watchdog *watchdog.Watchdog

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
	stop        sync.Once
	err         error
	// kill makes Stop kill the processes instead of letting them drain
	// (WithKillOnStop).
	kill bool

	// crds are the CRDs installed, by name, with where each came from;
	// crdMu serializes InstallCRDs.
	crdMu sync.Mutex
	crds  map[string]CRD

	// spawned are the process groups scenarios spawned and have not yet
	// seen exit (spawn.go): killed on an interrupt and at Stop, so that no
	// controller outlives the run.
	spawnMu sync.Mutex
	spawned map[int]struct{}

	// api is what the API-semantics commands keep for running scenarios:
	// their watches and their holds on old revisions (etcd.go, watch.go).
	api apiState
}

// OnInterrupt registers f to run when the process is interrupted, after the
// control plane has stopped and before the process exits: a caller's own
// cleanup, which the exit would otherwise skip.
func (cp *ControlPlane) OnInterrupt(f func()) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.onInterrupt = append(cp.onInterrupt, f)
}

// StartOption changes how StartControlPlane starts.
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

// StartControlPlane starts kube-apiserver and etcd from the binaries that
// assets.Find locates, installs the CRDs WithCRDs gives, and returns once
// the API server serves them. Call Stop when done; it also runs
// on SIGINT and SIGTERM, so that an interrupted run leaves no process behind.
// A process that dies without either (SIGKILL, a crash, an os.Exit) leaves
// none either: the control plane's watchdog, a process of its own started
// before anything else, kills kube-apiserver and etcd and removes their
// folder (internal/watchdog). A failed start returns the processes' output
// with the error.
func StartControlPlane(ctx context.Context, opts ...StartOption) (*ControlPlane, error) {
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
	logs := newTail(64 << 10)
	env := &envtest.Environment{
		BinaryAssetsDirectory: dir,
		ControlPlane: envtest.ControlPlane{
			APIServer: &envtest.APIServer{CertDir: filepath.Join(root, "kube-apiserver"), Out: logs.prefixed("kube-apiserver"), Err: logs.prefixed("kube-apiserver")},
			Etcd:      &envtest.Etcd{DataDir: filepath.Join(root, "etcd"), Out: logs.prefixed("etcd"), Err: logs.prefixed("etcd")},
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
		return nil, fmt.Errorf("start control plane: %w\n--- control-plane output (last %d bytes) ---\n%s", err, logs.size, logs.String())
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
		cp.killSpawned()
		if cp.signals != nil {
			signal.Stop(cp.signals)
			close(cp.signals)
		}
		if cp.kill {
			cp.killProcesses()
		}
		cp.err = errors.Join(cp.env.Stop(), os.RemoveAll(cp.root))
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

// Output returns the last of what kube-apiserver and etcd wrote, for failure
// messages.
func (cp *ControlPlane) Output() string { return cp.logs.String() }

// User returns a config that authenticates as the user name in groups,
// creating a client certificate the first time a name is asked for.
func (cp *ControlPlane) User(name string, groups ...string) (*rest.Config, error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cfg, ok := cp.users[name]; ok {
		return rest.CopyConfig(cfg), nil
	}
	u, err := cp.env.AddUser(envtest.User{Name: name, Groups: groups}, baseConfig())
	if err != nil {
		return nil, fmt.Errorf("add user %s: %w", name, err)
	}
	cfg := u.Config()
	cp.users[name] = cfg
	return rest.CopyConfig(cfg), nil
}

// Mapper returns the REST mapper built at start, which knows the built-in
// resources and the installed CRDs.
func (cp *ControlPlane) Mapper() meta.RESTMapper { return cp.mapper }

func newMapper(cfg *rest.Config) (meta.RESTMapper, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		return nil, fmt.Errorf("discover API resources: %w", err)
	}
	return restmapper.NewDiscoveryRESTMapper(groups), nil
}

// resource resolves a resource name as scenarios write it ("deployments",
// "deployment", "webapps") to its GroupVersionResource and scope.
func (cp *ControlPlane) resource(name string) (schema.GroupVersionResource, bool, error) {
	gvr, err := cp.mapper.ResourceFor(schema.GroupVersionResource{Resource: name})
	if err != nil {
		return gvr, false, fmt.Errorf("unknown resource %q%s", name, suggest(name, cp.resourceNames()))
	}
	gvk, err := cp.mapper.KindFor(gvr)
	if err != nil {
		return gvr, false, fmt.Errorf("kind of %s: %w", gvr, err)
	}
	m, err := cp.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return gvr, false, fmt.Errorf("mapping of %s: %w", gvk, err)
	}
	return gvr, m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// resourceNames lists the plural resource names the mapper knows, for hints.
func (cp *ControlPlane) resourceNames() []string {
	var names []string
	cp.crdMu.Lock()
	var crds []string
	for _, c := range cp.crds {
		crds = append(crds, c.Object.Spec.Names.Plural)
	}
	cp.crdMu.Unlock()
	sort.Strings(crds)
	for _, r := range append(crds, "deployments", "configmaps", "secrets", "pods", "services", "replicasets", "namespaces", "serviceaccounts") {
		if _, err := cp.mapper.ResourceFor(schema.GroupVersionResource{Resource: r}); err == nil {
			names = append(names, r)
		}
	}
	return names
}

// stopOnSignal stops cp and exits when the process is interrupted. envtest
// starts its processes in their own process group, so a Ctrl-C at the
// terminal never reaches them: without this, only the watchdog would end
// them, killed, after the process has gone; this stops them gracefully and
// runs the caller's cleanup (OnInterrupt).
func stopOnSignal(cp *ControlPlane) {
	cp.signals = make(chan os.Signal, 1)
	signal.Notify(cp.signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		s, ok := <-cp.signals
		if !ok {
			return
		}
		cp.mu.Lock()
		cp.interrupted = true
		cp.mu.Unlock()
		fmt.Fprintf(os.Stderr, "racekit: %v: stopping the control plane\n", s)
		cp.starting.Lock() // let a start in progress finish, then stop it
		cp.killSpawned()
		_ = cp.Stop()
		cp.mu.Lock()
		fs := cp.onInterrupt
		cp.mu.Unlock()
		for i := len(fs) - 1; i >= 0; i-- {
			fs[i]()
		}
		exitBySignal(s)
	}()
}

// track notes the process group of a spawned process, until untrack.
func (cp *ControlPlane) track(pgid int) {
	cp.spawnMu.Lock()
	defer cp.spawnMu.Unlock()
	if cp.spawned == nil {
		cp.spawned = map[int]struct{}{}
	}
	cp.spawned[pgid] = struct{}{}
}

func (cp *ControlPlane) untrack(pgid int) {
	cp.spawnMu.Lock()
	defer cp.spawnMu.Unlock()
	delete(cp.spawned, pgid)
}

// killSpawned kills every process group scenarios spawned that is still
// running. The scenario that spawned one stops it gently when it ends;
// this is for a run that ends first.
func (cp *ControlPlane) killSpawned() {
	cp.spawnMu.Lock()
	defer cp.spawnMu.Unlock()
	for pgid := range cp.spawned {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// exitBySignal ends the process the way s would have had nobody caught
// it, so that the parent sees a process killed by s: a shell reports 130
// for SIGINT and 143 for SIGTERM, and a fuzzing coordinator tells an
// interrupted worker from a crashed one by it.
func exitBySignal(s os.Signal) {
	sig, ok := s.(syscall.Signal)
	if !ok {
		os.Exit(1)
	}
	signal.Reset(sig)
	// Sent to this thread, the signal is delivered as tgkill returns, so
	// nothing below runs unless the signal is ignored (a process started
	// under nohup inherits SIGINT ignored).
	runtime.LockOSThread()
	_ = syscall.Tgkill(os.Getpid(), syscall.Gettid(), sig)
	os.Exit(128 + int(sig))
}

// tail keeps the last size bytes written to it.
type tail struct {
	mu   sync.Mutex
	buf  []byte
	size int
}

func newTail(size int) *tail { return &tail{size: size} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.size; over > 0 {
		t.buf = append(t.buf[:0:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// prefixed returns a writer that marks each line with the process name.
func (t *tail) prefixed(name string) io.Writer {
	return &linePrefixer{w: t, prefix: []byte(name + ": ")}
}

type linePrefixer struct {
	w      io.Writer
	prefix []byte
	mid    bool
}

func (l *linePrefixer) Write(p []byte) (int, error) {
	var out []byte
	for _, line := range bytes.SplitAfter(p, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if !l.mid {
			out = append(out, l.prefix...)
		}
		out = append(out, line...)
		l.mid = line[len(line)-1] != '\n'
	}
	if _, err := l.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
