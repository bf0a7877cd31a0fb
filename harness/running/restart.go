package running

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/views"
)

// A restart is a crash and a start again, as a process supervisor (a
// kubelet, a Deployment's ReplicaSet) would restart a controller that died:
// the same command line, the same environment, a new life of the same
// actor, whose informers list afresh. With stale, the new life lists the
// past: what a controller that reconnects to a lagging API server sees.
var restartCommands = []*language.Command{
	{
		Name: "restart", Args: "NAME [stale RESOURCE...] [at=RV|MARK] [within=DURATION]", Group: "run", MinArgs: 1, MaxArgs: -1,
		Summary: "crash what start or spawn runs as NAME, then start or spawn it again at once, as a new life of the same actor",
		Detail: "crash what start or spawn runs as NAME (as crash does; a NAME a crash already killed is not crashed again), then start or spawn it again at once with its last command line and environment, as a new life of the same actor (a process's log is then $WORK/NAME.2.log, and so on); " +
			"each stale RESOURCE is held at the wire for it as of at= (a resourceVersion or a mark; default: the revision at the crash), as hold NAME RESOURCE at= holds it: its next LIST of RESOURCE is served as of then, and its watch held until release; " +
			"a spawned NAME keeps the ports it holds (ports=) across the restart, and within= overrides the spawn line's own bound of its wait for them; " +
			"as a hook's action, at that moment; with explore, with restart NAME tries every moment",
		Hookable: true, Run: runRestart,
	},
}

// holdAt is views.HoldAt, which tests replace to see what restart asks of
// it.
var holdAt = views.HoldAt

func runRestart(sc *language.Scenario, inv language.Invocation) error {
	name := inv.Args[0]
	args := inv.Args[1:]
	var within time.Duration
	if n := len(args); n > 0 && strings.HasPrefix(args[n-1], "within=") {
		o, err := language.ParseOptions(args[n-1:], waitOptions)
		if err != nil {
			return err
		}
		if within, err = language.DurationOption(o, "within", 0); err != nil {
			return err
		}
		args = args[:n-1]
	}
	stale, at, err := parseRestart(args)
	if err != nil {
		return err
	}
	r, ok := lifelineOf(sc, name)
	if !ok {
		return unknownName(sc, "restart", name)
	}
	l := lastLife(sc, r)
	// A crashed life is started again, as a supervisor restarts a process
	// that died; anything else that does not run is refused.
	crashed := l.crash.at() != ""
	if !crashed {
		if err := notRunning(l, "restart"); err != nil {
			return err
		}
	}
	resources := make([]schema.GroupVersionResource, len(stale))
	namespaced := make([]bool, len(stale))
	for i, res := range stale {
		if resources[i], namespaced[i], err = sc.ControlPlane().Resource(res); err != nil {
			return language.UsageError("stale %s: %v", res, err)
		}
	}
	// Until the new life runs, a wait on the actor waits for it.
	l.crash.setRestarting(true)
	defer sc.Recorder().Poke()
	defer l.crash.setRestarting(false)
	if !crashed {
		if err := crashLife(sc, l, inv.Pos); err != nil {
			return err
		}
	}
	for i, res := range stale {
		rv := at
		if rv == "" {
			if rv, err = revisionNow(sc, resources[i], namespaced[i]); err != nil {
				return fmt.Errorf("%s was crashed, but not started again: the revision now, for its stale view of %s: %w", name, res, err)
			}
		}
		if err := holdAt(sc, l.actor, resources[i].Resource, rv, inv.Pos); err != nil {
			return fmt.Errorf("%s was crashed, but not started again: hold %s %s at=%s: %w", name, l.actor, resources[i].Resource, rv, err)
		}
	}
	if err := l.again(sc, inv.Pos, within); err != nil {
		return fmt.Errorf("%s was crashed, but could not be started again: %w", name, err)
	}
	return nil
}

// parseRestart reads restart's [stale RESOURCE...] [at=RV|MARK].
func parseRestart(args []string) (stale []string, at string, err error) {
	if n := len(args); n > 0 && strings.HasPrefix(args[n-1], "at=") {
		at, args = strings.TrimPrefix(args[n-1], "at="), args[:n-1]
		if at == "" {
			return nil, "", language.UsageError("at= names no revision: want at=RV (a resourceVersion) or at=MARK (a mark's name)")
		}
	}
	if len(args) == 0 {
		if at != "" {
			return nil, "", language.UsageError("at=%s without stale: at= says as of when the stale resources are seen; name them, as in restart NAME stale deployments at=%s", at, at)
		}
		return nil, "", nil
	}
	if args[0] != "stale" {
		return nil, "", language.UsageError("unexpected %q: after the name come stale RESOURCE... and at=RV|MARK", strings.Join(args, " "))
	}
	if len(args) == 1 {
		return nil, "", language.UsageError("stale names no resource: want stale RESOURCE..., such as stale deployments")
	}
	for _, res := range args[1:] {
		if strings.Contains(res, "=") || strings.Contains(res, "/") {
			return nil, "", language.UsageError("bad stale resource %q: want a resource such as deployments (a whole resource is held, not one object), and at= last", res)
		}
	}
	return args[1:], at, nil
}

// revisionNow returns the revision of the API server's store now, as a
// list of gvr in the scenario's namespace reads it: the resourceVersion a
// stale view as of this moment is served at. The harness's own client
// reads it, so the trace does not show it.
func revisionNow(sc *language.Scenario, gvr schema.GroupVersionResource, namespaced bool) (string, error) {
	dc, err := dynamic.NewForConfig(sc.ControlPlane().Admin())
	if err != nil {
		return "", err
	}
	var ri dynamic.ResourceInterface = dc.Resource(gvr)
	if namespaced {
		ri = dc.Resource(gvr).Namespace(sc.Namespace)
	}
	list, err := ri.List(sc.Context(), metav1.ListOptions{Limit: 1})
	if err != nil {
		return "", err
	}
	return list.GetResourceVersion(), nil
}

// startAgain returns how restart starts a controller again: start with
// the arguments it was started with.
func startAgain(args []string) func(*language.Scenario, string, time.Duration) error {
	args = append([]string(nil), args...)
	return func(sc *language.Scenario, pos string, _ time.Duration) error {
		return runStart(sc, language.Invocation{Args: args, Pos: pos})
	}
}

// spawnAgain returns how restart spawns a process again: spawn with the
// arguments it was spawned with, so the same command line and
// environment.
func spawnAgain(args []string) func(*language.Scenario, string, time.Duration) error {
	args = append([]string(nil), args...)
	return func(sc *language.Scenario, pos string, within time.Duration) error {
		return spawn(sc, language.Invocation{Args: args, Pos: pos}, within)
	}
}
