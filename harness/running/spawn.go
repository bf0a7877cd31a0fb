package running

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/proxy"
	"github.com/racekit/racekit/internal/tail"
)

// Racing a controller that runs as a process of its own, in any language:
// it reaches the API server through the scenario's racing proxy, which
// records its calls and fires the hooks on them as it does an in-process
// actor's.
var spawnCommands = []*language.Command{
	{
		Name: "spawn", Args: "NAME [ports=PORT,...] [metrics=ADDR] [within=DURATION] [KEY=VALUE...] -- COMMAND ARGS...", Group: "run", MinArgs: 3, MaxArgs: -1,
		Summary: "run COMMAND as a process, in the scenario's work folder, whose API calls go through the scenario's racing proxy as NAME",
		Detail: "run COMMAND as a process, in the scenario's work folder, whose API calls go through the scenario's racing proxy as the actor NAME, its LISTs and WATCHes of every namespace kept to the scenario's, its impersonation headers (unless actor NAME impersonate=true) and connection upgrades (exec, attach, port-forward) refused: " +
			"its environment is racekit's, with the KEY=VALUEs, $KUBECONFIG (there and on this line) NAME's kubeconfig for the proxy, and $NAMESPACE the scenario's namespace, which a KEY=VALUE cannot override; a relative COMMAND is taken from $WORK; its output goes to $WORK/NAME.log ($WORK/NAME.2.log for a second life, after a halt) and, when halted, to stdout; " +
			"it gets SIGTERM when the scenario ends, if halt has not stopped it; once it has exited, however it ended, every process it started is killed, in its process group or not (a daemon that double forked or called setsid), and so is all of it when racekit ends first, however racekit ends (each spawn has a reaper of its own); " +
			"ports=PORT,... (spawn's own, no environment variable) are fixed ports the program binds: a port is held from the spawn that first needs it until the scenario ends, across NAME's restarts and lives; scenarios of one racekit process take turns for it without a time limit, and racekit processes share a lock per port (a flock on racekit/ports/PORT.lock in the user's cache folder), for which spawn waits at most within= (default the scenario's wait timeout), then fails as unavailable, naming who holds it (explore counts such a run n/a); " +
			"metrics=ADDR (spawn's own) is where the process serves its Prometheus metrics over plain HTTP (:8080, 127.0.0.1:8080, or $METRICS_ADDR: a free port of loopback that spawn puts in its place on the line and in the environment, to pass to the program's flag): idle then settles it by its workqueues",
		Run: runSpawn,
	},
}

// SpawnedKubeconfig is what $KUBECONFIG holds in a scenario: a path that
// spawn turns into its actor's own kubeconfig. testscript expands $VARs
// before a command sees its arguments, so the path names no actor; the
// process's environment gets the real one.
const SpawnedKubeconfig = ".kube/ACTOR"

// spawnedLog bounds the output of a process kept for messages; all of it
// is in its log file.
const spawnedLog = 64 << 10

func runSpawn(sc *language.Scenario, inv language.Invocation) error { return spawn(sc, inv, 0) }

// spawn runs the spawn line inv; within, when set, overrides the line's
// within= (restart's own).
func spawn(sc *language.Scenario, inv language.Invocation, within time.Duration) error {
	name := inv.Args[0]
	if !language.ValidActor(name) {
		return language.UsageError("bad name %q: the process's actor, a lower-case name such as controller", name)
	}
	line, err := parseSpawnLine(name, inv.Args[1:])
	if err != nil {
		return err
	}
	env, ports, metrics, rest := line.env, line.ports, line.metrics, line.command
	if within == 0 {
		within = line.within
	}
	if within == 0 {
		within = waitTimeout(sc)
	}
	if err := checkFree(sc, name, name, "spawn"); err != nil {
		return err
	}
	placeholder := filepath.Join(sc.Dir, SpawnedKubeconfig)
	kubeconfigPath := filepath.Join(sc.Dir, ".kube", name)
	if err := checkSpawnEnv(sc, name, env, placeholder, kubeconfigPath); err != nil {
		return err
	}
	kubeconfig, err := kubeconfig(sc, name)
	if err != nil {
		return err
	}
	args := make([]string, 0, len(rest)-1)
	for _, a := range rest[1:] {
		args = append(args, strings.ReplaceAll(a, placeholder, kubeconfig))
	}
	for i, kv := range env {
		env[i] = strings.ReplaceAll(kv, placeholder, kubeconfig)
	}
	metricsAt, err := placeMetrics(metrics, args, env)
	if err != nil {
		return err
	}
	if err := lockPorts(sc, name, ports, inv.Pos, within); err != nil {
		return err
	}
	logFile, err := spawnLog(sc, name)
	if err != nil {
		return err
	}
	out := tail.New(spawnedLog)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = sc.Dir
	cmd.Env = append(append(os.Environ(), env...), "KUBECONFIG="+kubeconfig, "NAMESPACE="+sc.Namespace)
	cmd.Stdout = io.MultiWriter(logFile, out)
	cmd.Stderr = cmd.Stdout
	cmd.WaitDelay = 2 * time.Second
	first := sc.Recorder().LastSeq() + 1
	tree, err := startTree(sc, cmd)
	if err != nil {
		logFile.Close()
		return fmt.Errorf("start %s: %w%s", args[0], err, notFoundHint(sc, args[0], err))
	}
	// Once the program runs: the reaper's own start is not the program's.
	started := time.Now()
	l := &life{name: name, actor: name, what: "process", started: started, firstSeq: first, metrics: metricsAt, stop: tree.terminate, kill: tree.kill,
		done: make(chan struct{}), output: out, again: spawnAgain(inv.Args)}
	addLife(sc, l)
	go func() {
		// What it started goes with it; its ports stay the scenario's.
		err := tree.wait()
		logFile.Close()
		if err != nil {
			l.err = fmt.Errorf("%s: %w", strings.Join(args, " "), err)
		}
		l.noteGone(sc)
		close(l.done)
		sc.Recorder().Poke()
	}()
	return nil
}

// spawnLine is what follows NAME on a spawn line: the KEY=VALUEs of the
// environment, spawn's own ports= (ports.go), metrics= (metrics.go) and
// within=, and, after --, the command and its arguments.
type spawnLine struct {
	env     []string
	ports   []int
	metrics string
	within  time.Duration
	command []string
}

// parseSpawnLine reads what follows NAME on a spawn line.
func parseSpawnLine(name string, args []string) (spawnLine, error) {
	var line spawnLine
	rest := args
	seen := map[string]bool{}
	for len(rest) > 0 && rest[0] != "--" {
		k, v, ok := strings.Cut(rest[0], "=")
		switch {
		case !ok || k == "":
			return spawnLine{}, language.UsageError("want KEY=VALUE or -- before the command, got %q: spawn %s -- ./manager --kubeconfig $KUBECONFIG", rest[0], name)
		case (k == portsOption || k == metricsOption || k == "within") && seen[k]:
			return spawnLine{}, language.UsageError("%s= given twice", k)
		case k == portsOption:
			ports, err := parsePorts(v)
			if err != nil {
				return spawnLine{}, err
			}
			line.ports = ports
		case k == metricsOption:
			if v == "" {
				return spawnLine{}, language.UsageError("metrics= names no address: want metrics=:8080, or metrics=$METRICS_ADDR with the process told to serve there")
			}
			line.metrics = v
		case k == "within":
			d, err := language.DurationOption(map[string]string{k: v}, k, 0)
			if err != nil {
				return spawnLine{}, err
			}
			line.within = d
		default:
			line.env = append(line.env, rest[0])
		}
		seen[k] = true
		rest = rest[1:]
	}
	if len(rest) < 2 {
		return spawnLine{}, language.UsageError("want -- and a command after the name, as in spawn %s -- ./manager --kubeconfig $KUBECONFIG", name)
	}
	line.command = rest
	return line, nil
}

// placeMetrics returns the URL of the process's metrics endpoint, "" when
// it has none: metrics= names it. $METRICS_ADDR, the placeholder, becomes
// a free port of loopback, on metrics= and wherever it is in args and env,
// which placeMetrics changes in place; it is only for a spawn with metrics=,
// which reads it.
func placeMetrics(metrics string, args, env []string) (string, error) {
	uses := false
	for _, a := range append(append([]string(nil), args...), env...) {
		uses = uses || strings.Contains(a, MetricsPlaceholder)
	}
	if metrics == "" {
		if uses {
			return "", language.UsageError("$METRICS_ADDR is for the metrics of a process spawned with metrics=$METRICS_ADDR, which idle reads: add it to the spawn line")
		}
		return "", nil
	}
	if strings.Contains(metrics, MetricsPlaceholder) {
		addr, err := freeMetricsAddr()
		if err != nil {
			return "", err
		}
		metrics = strings.ReplaceAll(metrics, MetricsPlaceholder, addr)
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], MetricsPlaceholder, addr)
		}
		for i := range env {
			env[i] = strings.ReplaceAll(env[i], MetricsPlaceholder, addr)
		}
	} else if uses {
		return "", language.UsageError("$METRICS_ADDR is used on the line, but metrics=%s names another address: give metrics=$METRICS_ADDR", metrics)
	}
	return metricsURL(metrics)
}

// checkSpawnEnv refuses a KEY=VALUE of the spawn line that spawn would
// override: KUBECONFIG, which must point the process at the racing proxy as
// the actor name, so that its calls are recorded and hooked, and
// NAMESPACE, the scenario's namespace, outside which its objects are other
// scenarios'. The placeholder $KUBECONFIG, and the values spawn sets
// anyway, are fine.
func checkSpawnEnv(sc *language.Scenario, name string, env []string, placeholder, kubeconfig string) error {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "KUBECONFIG" && v != placeholder && v != kubeconfig:
			return language.UsageError("%s would be overridden: spawn sets KUBECONFIG to %s's kubeconfig for the racing proxy (%s), so that every call the process makes is recorded and hooked as %s; "+
				"leave it out, or write KUBECONFIG=$KUBECONFIG, and give a program that must read another kubeconfig a flag of its own", kv, name, kubeconfig, name)
		case k == "NAMESPACE" && v != sc.Namespace:
			return language.UsageError("%s would be overridden: spawn sets NAMESPACE to the scenario's namespace (%s), where its objects are, since other scenarios run beside it on the same API server; "+
				"leave it out, or write NAMESPACE=$NAMESPACE", kv, sc.Namespace)
		}
	}
	return nil
}

// notFoundHint says where spawn looked for a command it could not start:
// a relative path in the scenario's work folder, a bare name on $PATH.
func notFoundHint(sc *language.Scenario, command string, err error) string {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return fmt.Sprintf("; a name without a slash is looked up in $PATH, and COMMAND runs in the scenario's work folder, %s: a program there is ./%s", sc.Dir, command)
	case errors.Is(err, fs.ErrNotExist) && !filepath.IsAbs(command):
		return fmt.Sprintf("; COMMAND runs in the scenario's work folder, %s, so %s is taken from there: the scenario's archive files are there, and a program built elsewhere needs its absolute path or a name on $PATH", sc.Dir, command)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("; it is not executable (a file from the scenario's archive is not: chmod 755 %s before spawn makes it so); COMMAND runs in the scenario's work folder, %s", command, sc.Dir)
	}
	return ""
}

// spawnLog creates the log file of the next life under name:
// $WORK/NAME.log for the first, $WORK/NAME.2.log for the second, and so
// on, so that a life does not overwrite the one before.
func spawnLog(sc *language.Scenario, name string) (*os.File, error) {
	st := stateOf(sc)
	st.mu.Lock()
	n := 1
	if r, ok := st.lifelines[name]; ok {
		n = len(r.lives) + 1
	}
	st.mu.Unlock()
	file := name + ".log"
	if n > 1 {
		file = fmt.Sprintf("%s.%d.log", name, n)
	}
	return os.Create(filepath.Join(sc.Dir, file))
}

// kubeconfig writes actor's kubeconfig for the scenario's racing proxy
// into the work folder, and returns its path.
func kubeconfig(sc *language.Scenario, actor string) (string, error) {
	path := filepath.Join(sc.Dir, ".kube", actor)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	return path, WriteKubeconfig(sc, actor, path)
}

// Proxy returns the scenario's racing proxy, started on first use and
// closed when the scenario ends: an actor whose kubeconfig points at it
// (WriteKubeconfig) has each call recorded and hooked as an in-process
// actor's is. An actor's reads of every namespace are kept to the
// scenario's, and its impersonations (unless declared) and connection
// upgrades are refused and recorded as its calls (confine.go). A request
// without an actor's credentials is refused with 401, and recorded as the
// actor anonymous.
func Proxy(sc *language.Scenario) (*proxy.Server, error) {
	st := stateOf(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.proxy != nil {
		return st.proxy, nil
	}
	upstream, err := url.Parse(sc.ControlPlane().Admin().Host)
	if err != nil {
		return nil, fmt.Errorf("racing proxy: the API server's address: %w", err)
	}
	p, err := proxy.Start(proxy.Options{
		Upstream: upstream,
		Transport: func(actor string) (_ http.RoundTripper, err error) {
			a, err := sc.Actor(actor)
			if err != nil {
				return nil, err
			}
			rt, err := rest.TransportFor(a.Config)
			if err != nil {
				return nil, err
			}
			return ownDiscovery(sc, actor, ownNodes(sc, livesOf(sc, actor, rewindable{rt})))
		},
		Unauthenticated: sc.Recorder().Wrap(AnonymousActor)(proxy.Refuse),
		Log:             st.proxyLog,
		Confine:         confinement(sc),
		Impersonation:   impersonation(sc),
		Refusals:        refusals(sc),
	})
	if err != nil {
		return nil, fmt.Errorf("racing proxy: %w", err)
	}
	st.proxy = p
	sc.Defer(func() { _ = p.Close() })
	return p, nil
}

// AnonymousActor is who a request to the racing proxy without an actor's
// credentials is recorded as.
const AnonymousActor = "anonymous"

// WriteKubeconfig writes a kubeconfig to path with which a client reaches
// the scenario's racing proxy as actor, in the scenario's namespace: for
// spawn, and for racekit proxy, which hands them to people and their
// controllers. The proxy starts on first use.
func WriteKubeconfig(sc *language.Scenario, actor, path string) error {
	st := stateOf(sc)
	p, err := Proxy(sc)
	if err != nil {
		return err
	}
	if _, err := sc.Actor(actor); err != nil {
		return err
	}
	st.mu.Lock()
	added := st.proxied[actor]
	if st.proxied == nil {
		st.proxied = map[string]bool{}
	}
	st.proxied[actor] = true
	st.mu.Unlock()
	if !added {
		if err := p.AddActor(actor); err != nil {
			return err
		}
	}
	data, err := p.Kubeconfig(actor, sc.Namespace)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// rewindable gives a request that came in through the racing proxy a body
// that can be read again (GetBody), as client-go's requests have: the
// hooks read a create's name from a copy of its body, and a request that
// net/http's server received has none.
type rewindable struct{ next http.RoundTripper }

func (r rewindable) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil {
		return r.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read the body of %s %s: %w", req.Method, req.URL.Path, err)
	}
	req = req.Clone(req.Context())
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	req.Body, _ = req.GetBody()
	req.ContentLength = int64(len(body))
	return r.next.RoundTrip(req)
}
