package running

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/internal/assets"
)

// The cluster parts envtest lacks, real ones (and pods.go): kube-controller-manager,
// built from k8s.io/kubernetes like kube-apiserver (make
// controller-manager), runs the controllers a scenario names as a spawned
// process whose calls, like any spawned process's, come in through the
// racing proxy: recorded, hookable and awaitable as its actor's.
var kcmCommands = []*language.Command{
	{
		Name: "controller-manager", Args: "[controllers=NAME,...] [as ACTOR]", Group: "run", MinArgs: 0, MaxArgs: 3,
		Summary: "spawn kube-controller-manager as the actor ACTOR (default kcm) through the racing proxy, running the controllers named",
		Detail: "spawn kube-controller-manager (make controller-manager builds it) as the actor ACTOR (default " + KCMActor + ") through the racing proxy, running the controllers named (default " + DefaultKCMControllers + ": the garbage collector and the StatefulSet controller; kube-controller-manager --help lists the others), " +
			"with --leader-elect=false and --secure-port=0; it returns once kube-controller-manager has made its first call, and fails with the tail of its log when it exits first; " +
			"its lists and watches of every namespace are kept to the scenario's, and of nodes to the scenario's nodes, and its discovery to the built-in API groups and the scenario's CRDs (the test process's, and those the scenario created), so that it caches no other package's custom resources; pods stay Pending unless the scenario runs scheduler and node NAME, and node-lifecycle-controller among the controllers, which takes a Ready node's not-ready taint off (it gets grace periods of an hour, since the nodes' leases, in kube-node-lease, are outside its view: it never judges a node by them); halt, crash and restart take ACTOR as its name",
		Run: runControllerManager,
	},
}

// KCMActor is the actor, and the name, controller-manager runs
// kube-controller-manager as unless told.
const KCMActor = "kcm"

// DefaultKCMControllers are the controllers controller-manager runs
// unless told: the ones real operators rely on that envtest lacks.
const DefaultKCMControllers = "garbagecollector,statefulset"

// findControllerManager finds the binary; tests replace it.
var findControllerManager = assets.FindControllerManager

var kcmOptions = []string{"controllers"}

// controllerNames are kube-controller-manager's controller names: words
// with hyphens, each may be "*" or start with "-" (a controller off).
var controllerNames = regexp.MustCompile(`^(\*|-?[a-z][a-z0-9-]*)(,(\*|-?[a-z][a-z0-9-]*))*$`)

func runControllerManager(sc *language.Scenario, inv language.Invocation) error {
	args, actor := inv.Args, KCMActor
	if n := len(args); n >= 2 && args[n-2] == "as" {
		var err error
		if actor, err = language.AsActor(args[n-2:]); err != nil {
			return err
		}
		args = args[:n-2]
	}
	opts, err := language.ParseOptions(args, kcmOptions)
	if err != nil {
		return err
	}
	ctrls := DefaultKCMControllers
	if v, ok := opts["controllers"]; ok {
		if !controllerNames.MatchString(v) {
			return language.UsageError("bad controllers=%s: want kube-controller-manager's controller names, comma-separated, such as controllers=garbagecollector,statefulset", v)
		}
		ctrls = v
	}
	path, err := findControllerManager()
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(sc.Dir, SpawnedKubeconfig)
	spawn := []string{actor, "--", path,
		"--kubeconfig=" + kubeconfig,
		"--controllers=" + ctrls,
		// One kube-controller-manager per scenario: no lease to take in
		// kube-system, and no fixed port (10257) to collide on.
		"--leader-elect=false",
		"--secure-port=0",
		// Its discovery and its informers' first lists are dozens of
		// calls, which the client's default rate limit (20 a second)
		// would spread over seconds.
		"--kube-api-qps=1000", "--kube-api-burst=1000",
		// The node lifecycle controller judges a node's health by its
		// lease, in kube-node-lease, which its informer of every
		// namespace's leases, kept to the scenario's namespace, never
		// sees. Once a grace period passed (50 s; 60 s for a new node),
		// it would find the lease expired in its cache, read it live
		// (NodeControllerLeaseCircuitBreaker, on in 1.37), take its
		// cache for stale and do no node's work until the cache caught
		// up, which it never does (without the gate it would mark the
		// node Unknown instead). Grace periods longer than any scenario
		// keep it from there; it still takes the not-ready taint off a
		// node its kubelet reports Ready.
		"--node-monitor-grace-period=1h", "--node-startup-grace-period=1h",
	}
	keepDiscovery(sc, actor)
	if err := runSpawn(sc, language.Invocation{Args: spawn, Pos: inv.Pos}); err != nil {
		return fmt.Errorf("spawn kube-controller-manager: %w", err)
	}
	r, _ := lifelineOf(sc, actor)
	return firstCall(sc, lastLife(sc, r), strings.Join(spawn[2:], " "))
}

// firstCall waits until l, kube-controller-manager, has had an answer
// from the API server, and fails with its log's tail when it exits first
// (a controller name it does not know, a flag it refuses) or makes no
// call within the scenario's wait.
func firstCall(sc *language.Scenario, l *life, cmdline string) error {
	within := waitTimeout(sc)
	return waitFor(sc, within, func() (bool, error) {
		answered := false
		sc.Recorder().Scan(func(x *record.Exchange) {
			if x.Actor == l.actor && x.Code != 0 {
				answered = true
			}
		})
		if answered {
			return true, nil
		}
		if done, _ := l.ended(); done {
			return false, fmt.Errorf("kube-controller-manager exited before its first call (%s): %s", cmdline, l.describe())
		}
		return false, nil
	}, func() error {
		out := strings.TrimSpace(l.output.String())
		return fmt.Errorf("kube-controller-manager made no call within %v (%s); its last output:\n%s", within, cmdline, lastLines(out, 15))
	})
}
