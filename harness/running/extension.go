package running

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/proxy"
	"github.com/racekit/racekit/internal/tail"
)

// state is what the running extension keeps for one scenario.
type state struct {
	mu sync.Mutex
	// lifelines are the names under which controllers and processes run
	// on their own, each with its lives (lives.go).
	lifelines map[string]*lifeline
	// proxy is the racing proxy, once spawn or racekit proxy needed it;
	// proxied are the actors it knows, and proxyLog what it said of
	// requests it could not serve (spawn.go).
	proxy    *proxy.Server
	proxied  map[string]bool
	proxyLog *tail.Tail
	// discovery are the actors whose discovery is kept to the
	// scenario's CRDs (discovery.go).
	discovery map[string]bool
}

var stateKey = language.NewKey("running", func(*language.Scenario) *state {
	return &state{lifelines: map[string]*lifeline{}, proxied: map[string]bool{}, proxyLog: tail.New(16 << 10), discovery: map[string]bool{}}
})

// stateOf returns the running extension's state in sc.
func stateOf(sc *language.Scenario) *state { return stateKey.Of(sc) }

// Extension returns the extension of controllers that run on their own:
// start, spawn, await, idle, halt, crash, restart, controller-manager,
// scheduler, node and ready. A scenario's $KUBECONFIG is the path spawn
// turns into its actor's kubeconfig; at the scenario's end, what still runs
// is halted, and a process's output and what the racing proxy said go to
// the scenario's log. What each actor is shown is package views' (hold NAME
// holds what runs as NAME: ActorOf).
func Extension() *language.Extension {
	var cmds []*language.Command
	for _, cs := range [][]*language.Command{runCommands, spawnCommands, waitCommands, idleCommands, catchUpCommands, crashCommands, restartCommands, kcmCommands, podCommands, readyCommands, finalizedCommands} {
		cmds = append(cmds, cs...)
	}
	return &language.Extension{
		Name:     "running",
		Commands: cmds,
		Setup: func(sc *language.Scenario, setenv func(string, string)) error {
			setenv("KUBECONFIG", filepath.Join(sc.Dir, SpawnedKubeconfig))
			setenv("METRICS_ADDR", MetricsPlaceholder)
			return nil
		},
		End: end,
	}
}

// end halts what still runs when the scenario ends, and returns what the
// scenario's log shows of it and what went wrong: a controller or process
// that would not stop, or that had ended on its own with an error.
func end(sc *language.Scenario) ([]string, []language.Failure) {
	var fs []language.Failure
	for _, msg := range haltAll(sc) {
		fs = append(fs, language.Failure{Kind: language.FailHalted, Message: msg})
	}
	logs := outputs(sc)
	if st := stateKey.Peek(sc); st != nil {
		if s := strings.TrimSpace(st.proxyLog.String()); s != "" {
			logs = append(logs, "the racing proxy said:\n"+s)
		}
	}
	return logs, fs
}

// ActorOf returns the actor that what start or spawn ran as name runs as:
// its last life's. It is how package views reads hold NAME.
func ActorOf(sc *language.Scenario, name string) (string, bool) {
	r, ok := lifelineOf(sc, name)
	if !ok {
		return "", false
	}
	return r.last().actor, true
}
