package running

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/internal/assets"
)

// Pods that run: the real kube-scheduler, and kubemark's hollow node (the
// real kubelet with a fake container runtime), each built from
// k8s.io/kubernetes like kube-apiserver (make scheduler, make kubemark)
// and spawned through the racing proxy as an actor, so that its calls are
// recorded, hookable and awaitable, and halt, crash and restart take it.
// With kube-controller-manager's node lifecycle controller, which takes a
// Ready node's not-ready taint off, a scenario's pods are scheduled, run
// and become Ready, and a deleted pod is deleted gracefully, by its
// kubelet.
var podCommands = []*language.Command{
	{
		Name: "scheduler", Args: "[as ACTOR]", Group: "run", MinArgs: 0, MaxArgs: 2,
		Summary: "spawn kube-scheduler as the actor ACTOR (default scheduler) through the racing proxy, binding the scenario's pods to its nodes",
		Detail: "spawn kube-scheduler (make scheduler builds it) as the actor ACTOR (default " + SchedulerActor + ") through the racing proxy, with a configuration of its own (no leader election, no serving port): it binds each pending pod of the scenario to one of the scenario's nodes (node NAME), and sees no other scenario's pods or nodes; " +
			"it returns once kube-scheduler has made its first call, and fails with the tail of its log when it exits first; halt, crash and restart take ACTOR as its name",
		Run: runScheduler,
	},
	{
		Name: "node", Args: "NAME [heartbeat] [as ACTOR]", Group: "run", MinArgs: 1, MaxArgs: 4,
		Summary: "spawn a kubelet (kubemark's hollow node) that registers the node NAME.$NAMESPACE and runs the scenario's pods bound to it",
		Detail: "spawn a kubelet, kubemark's hollow node (make kubemark builds it: the real kubelet with a fake container runtime, whose containers start at once and run nothing), as the actor ACTOR (default NAME) through the racing proxy: it registers the node NAME.$NAMESPACE, labelled " + ScenarioLabel + "=$NAMESPACE, renews its lease in kube-node-lease, and runs the scenario's pods bound to it, through the kubelet's own pod workers and status manager, until they are Running and Ready; it deletes a deleted pod once its containers are stopped; " +
			"the scenario's processes list and watch only the scenario's nodes; the API server taints a new node not-ready, which kube-controller-manager's node-lifecycle-controller takes off once the node is Ready (controller-manager controllers=...,node-lifecycle-controller); " +
			"it returns once the kubelet's registration of the node is answered, with heartbeat once its lease is written too (a kubelet that starts before its node exists writes its first lease at its next renewal, 10s later), and fails with the tail of its log when it exits first; the node, its lease and its CSINode are deleted when the scenario ends; halt, crash and restart take ACTOR as its name",
		Run: runNode,
	},
}

// SchedulerActor is the actor, and the name, scheduler runs kube-scheduler
// as unless told.
const SchedulerActor = "scheduler"

// findScheduler and findKubemark find the binaries; tests replace them.
var (
	findScheduler = assets.FindScheduler
	findKubemark  = assets.FindKubemark
)

// schedulerConfig is kube-scheduler's configuration: the actor's
// kubeconfig for the racing proxy, no leader election (one scheduler per
// scenario: no lease to take in kube-system), and a client rate limit
// high enough that its informers' first lists are not spread over
// seconds.
const schedulerConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: 1000
  burst: 1000
leaderElection:
  leaderElect: false
`

func runScheduler(sc *language.Scenario, inv language.Invocation) error {
	actor := SchedulerActor
	if len(inv.Args) > 0 {
		var err error
		if actor, err = language.AsActor(inv.Args); err != nil {
			return err
		}
	}
	path, err := findScheduler()
	if err != nil {
		return err
	}
	// spawn writes the actor's kubeconfig there.
	config := filepath.Join(sc.Dir, ".kube", actor+".scheduler.yaml")
	if err := os.MkdirAll(filepath.Dir(config), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(config, fmt.Appendf(nil, schedulerConfig, filepath.Join(sc.Dir, ".kube", actor)), 0o600); err != nil {
		return fmt.Errorf("write kube-scheduler's configuration: %w", err)
	}
	spawn := []string{actor, "--", path,
		"--config=" + config,
		// No fixed port (10259) for parallel scenarios to collide on.
		"--secure-port=0",
	}
	if err := runSpawn(sc, language.Invocation{Args: spawn, Pos: inv.Pos}); err != nil {
		return fmt.Errorf("spawn kube-scheduler: %w", err)
	}
	r, _ := lifelineOf(sc, actor)
	return started(sc, lastLife(sc, r), "kube-scheduler", strings.Join(spawn[2:], " "), anyCall)
}

// maxNodeName is the longest name a node may have: its kubelet labels it
// kubernetes.io/hostname=NAME, and a label's value has at most 63
// characters.
const maxNodeName = 63

func runNode(sc *language.Scenario, inv language.Invocation) error {
	name, actor, rest := inv.Args[0], inv.Args[0], inv.Args[1:]
	if !language.ValidActor(name) {
		return language.UsageError("bad node name %q: a lower-case name such as n1, which is also its kubelet's actor unless as ACTOR says", name)
	}
	heartbeat := len(rest) > 0 && rest[0] == "heartbeat"
	if heartbeat {
		rest = rest[1:]
	}
	if len(rest) > 0 {
		var err error
		if actor, err = language.AsActor(rest); err != nil {
			return err
		}
	}
	node := nodeName(sc, name)
	if len(node) > maxNodeName {
		return language.UsageError("node name %s is %d characters long, more than the %d of a label's value (its kubelet labels it kubernetes.io/hostname=%s): give it a shorter NAME than %s", node, len(node), maxNodeName, node, name)
	}
	path, err := findKubemark()
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	// The hollow kubelet keeps its fake runtime's socket under $TMPDIR,
	// and never removes it: a short folder of the scenario's own (unix
	// sockets have at most 107 bytes of path), removed when the scenario
	// ends. Its root folder, with its pods' folders, it makes in /tmp
	// whatever $TMPDIR says, and never removes either: the scenario
	// removes the ones its log names, once its lives have ended.
	tmp, err := os.MkdirTemp("", "racekit-node-")
	if err != nil {
		return fmt.Errorf("node %s: a folder for its kubelet: %w", name, err)
	}
	sc.Defer(func() {
		_ = os.RemoveAll(tmp)
		kubeletRootsRemoved(actor, removeKubeletRoots(sc.Dir, actor))
	})
	kubeconfig := filepath.Join(sc.Dir, SpawnedKubeconfig)
	spawn := []string{actor, "TMPDIR=" + tmp, "--", path,
		"--morph=kubelet",
		"--name=" + node,
		"--kubeconfig=" + kubeconfig,
		"--node-labels=" + ScenarioLabel + "=" + sc.Namespace,
		// The fake image service: the host's (containerd's socket) is
		// the default.
		"--use-host-image-service=false",
		// No fixed port (10250, 10255) for parallel scenarios to collide
		// on: the kubelet's API on a port that was free, none read-only.
		"--kubelet-port=" + strconv.Itoa(port),
		"--kubelet-read-only-port=0",
		"--kube-api-qps=1000", "--kube-api-burst=1000",
	}
	if err := runSpawn(sc, language.Invocation{Args: spawn, Pos: inv.Pos}); err != nil {
		return fmt.Errorf("spawn the kubelet of node %s: %w", name, err)
	}
	sc.Defer(func() { removeNode(sc, node) })
	r, _ := lifelineOf(sc, actor)
	evs := []evidence{{"its registration of node " + node + " (create nodes/" + node + ")", func(x *record.Exchange) bool {
		// 409: the node is there already, from an earlier life.
		return x.Verb == "create" && x.Resource == "nodes" && x.Name == node && (x.Code == 201 || x.Code == 409)
	}}}
	if heartbeat {
		evs = append(evs, evidence{"its heartbeat (create or update leases/" + node + " in " + leaseNamespace + ")", func(x *record.Exchange) bool {
			return x.Resource == "leases" && x.Namespace == leaseNamespace && x.Name == node &&
				(x.Verb == "create" && (x.Code == 201 || x.Code == 409) || x.Verb == "update" && x.Code == 200)
		}})
	}
	return started(sc, lastLife(sc, r), "the kubelet of node "+name, strings.Join(spawn[3:], " "), evs...)
}

// kubeletRootLine is the line of a hollow kubelet's log that names its
// root folder (k8s.io/kubernetes/pkg/kubemark/hollow_kubelet.go): it
// makes the folder with test/utils.MakeTempDirOrDie, in /tmp whatever
// $TMPDIR says, and never removes it, so every node a scenario started
// left one behind until 2026-12-07. The pattern takes nothing but such a
// folder, so that no log line can name another for removal.
var kubeletRootLine = regexp.MustCompile(`Using (/tmp/hollow-kubelet\.[0-9]+) as root dir for hollow-kubelet`)

// kubeletLog names the log files of an actor's lives (spawnLog):
// ACTOR.log, then ACTOR.2.log and on for each restart.
func kubeletLog(actor, file string) bool {
	if file == actor+".log" {
		return true
	}
	n, ok := strings.CutPrefix(file, actor+".")
	if !ok {
		return false
	}
	n, ok = strings.CutSuffix(n, ".log")
	_, err := strconv.Atoi(n)
	return ok && err == nil
}

// removeKubeletRoots removes the root folders that the logs of actor's
// lives in the work folder dir name, and returns them. It runs when the
// scenario ends, once its processes have been halted; a folder it cannot
// read or remove stays, as it would have without it.
func removeKubeletRoots(dir, actor string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var roots []string
	for _, e := range entries {
		if !kubeletLog(actor, e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		for _, m := range kubeletRootLine.FindAllSubmatch(data, -1) {
			root := string(m[1])
			if os.RemoveAll(root) == nil {
				roots = append(roots, root)
			}
		}
	}
	return roots
}

// kubeletRootsRemoved is told the root folders removed for each node's
// actor when its scenario ends: TestPods checks them.
var kubeletRootsRemoved = func(actor string, roots []string) {}

// leaseNamespace is where a kubelet keeps its node's lease, its heartbeat
// (v1.NamespaceNodeLease): the API server creates it, and it is no
// scenario's.
const leaseNamespace = "kube-node-lease"

// removeNode deletes what a node's kubelet registered, once the scenario
// has ended and its kubelet has exited: the node, its lease and its
// CSINode, which are cluster-scoped or in kube-node-lease, so that the
// namespace does not take them with it, and which no garbage collector
// runs here to collect by their owner, the node. The scenario's trace has
// ended, so these calls are the harness's own; a failure leaves an object
// that no other scenario sees (nodes.go).
func removeNode(sc *language.Scenario, node string) {
	cs, err := kubernetes.NewForConfig(sc.ControlPlane().Admin())
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = cs.CoordinationV1().Leases(leaseNamespace).Delete(ctx, node, metav1.DeleteOptions{})
	_ = cs.StorageV1().CSINodes().Delete(ctx, node, metav1.DeleteOptions{})
	_ = cs.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{})
}

// freePort returns a TCP port that no one listens on now, on any address:
// the hollow kubelet serves its API on every address (0.0.0.0), and takes
// no address to serve on. Another process may take the port first; the
// kubelet then fails to start, and says so.
func freePort() (int, error) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		return 0, fmt.Errorf("a free port for the kubelet: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// evidence is a call that shows a process has started: what it is, for
// messages, and which answered exchanges of the process's are it.
type evidence struct {
	what string
	is   func(*record.Exchange) bool
}

// anyCall is the evidence of a process's first call.
var anyCall = evidence{"its first call", func(*record.Exchange) bool { return true }}

// started waits until l, the process called what, has made a call, and an
// answered one, of each evidence, and fails with its log's tail when it
// exits first (a flag it refuses, a port it cannot bind) or has not shown
// every evidence within the scenario's wait.
func started(sc *language.Scenario, l *life, what, cmdline string, evs ...evidence) error {
	within := waitTimeout(sc)
	missing := func() []string {
		seen := make([]bool, len(evs))
		sc.Recorder().Scan(func(x *record.Exchange) {
			if x.Seq < l.firstSeq || x.Actor != l.actor || x.Code == 0 {
				return
			}
			for i, e := range evs {
				seen[i] = seen[i] || e.is(x)
			}
		})
		var out []string
		for i, e := range evs {
			if !seen[i] {
				out = append(out, e.what)
			}
		}
		return out
	}
	return waitFor(sc, within, func() (bool, error) {
		m := missing()
		if len(m) == 0 {
			return true, nil
		}
		if done, _ := l.ended(); done {
			return false, fmt.Errorf("%s exited before %s (%s): %s", what, strings.Join(m, " and "), cmdline, l.describe())
		}
		return false, nil
	}, func() error {
		out := strings.TrimSpace(l.output.String())
		return fmt.Errorf("%s has not shown %s within %v (%s); its last output:\n%s", what, strings.Join(missing(), " and "), within, cmdline, lastLines(out, 15))
	})
}
