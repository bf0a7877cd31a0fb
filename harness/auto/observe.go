package auto

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
)

// observed is what auto-observe read at the end of a run, and how long
// the trace was when it began to read (from) and when it was done (to).
type observed struct {
	mu       sync.Mutex
	state    State
	from, to int
}

var observedKey = language.NewKey("auto", func(*language.Scenario) *observed { return &observed{} })

// Extension returns the extension of explore auto: the hidden command its
// runs end with, auto-observe, which reads the end state.
func Extension() *language.Extension {
	return &language.Extension{Name: "auto", Commands: commands}
}

var commands = []*language.Command{{
	Name: "auto-observe", Args: "[RESOURCE...]", Group: "race", MinArgs: 0, MaxArgs: -1, Hidden: true,
	Summary: "read every object of RESOURCE and of every resource the trace touched in the namespace, for explore auto's oracle",
	Run:     runObserve,
}}

// runObserve reads every object, in the scenario's namespace, of the
// resources it names and of every namespaced resource the trace's calls
// touched, outside the recording (as the harness itself), and keeps them
// with the trace's history for the oracle (Observed).
func runObserve(sc *language.Scenario, inv language.Invocation) error {
	resources := slices.Clone(inv.Args)
	for _, r := range sc.Trace().Rows() {
		if r.Actor == "" || r.Object == "" || r.Service != "" || r.OtherNamespace != "" {
			continue
		}
		res, _, _ := strings.Cut(r.Object, "/")
		if !slices.Contains(resources, res) {
			resources = append(resources, res)
		}
	}
	slices.Sort(resources)
	cl, err := dynamic.NewForConfig(sc.ControlPlane().Admin())
	if err != nil {
		return fmt.Errorf("a client to read the end state: %w", err)
	}
	_, from := sc.Recorder().Since(math.MaxInt)
	st := State{Read: true, Objects: map[string]map[string]string{}}
	for _, res := range resources {
		if sc.Service(res) || unrecorded(res) {
			continue
		}
		gvr, namespaced, err := sc.ControlPlane().Resource(res)
		if err != nil || !namespaced {
			// A resource the API server does not serve (a call that
			// failed), or one of the cluster's, shared with other
			// runs: not compared.
			continue
		}
		list, err := cl.Resource(gvr).Namespace(sc.Namespace).List(sc.Context(), metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("read %s at the end: %w", res, err)
		}
		st.Resources = append(st.Resources, res)
		for _, item := range list.Items {
			st.Add(res, item.GetName(), item.Object, sc.Namespace)
		}
	}
	_, to := sc.Recorder().Since(math.MaxInt)
	o := observedKey.Of(sc)
	o.mu.Lock()
	o.state, o.from, o.to = st, from, to
	o.mu.Unlock()
	return nil
}

// Observed returns what the scenario's auto-observe read, with the
// history and the late hooks of the trace as the script ended (readAt);
// its Read is false when none ran, and its history is then the whole
// trace's.
func Observed(sc *language.Scenario) State {
	rows := sc.Trace().Rows()
	o := observedKey.Peek(sc)
	if o == nil {
		return State{History: HistoryOf(rows)}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	st := o.state
	st.History, st.Late = readAt(rows, o.from, o.to)
	return st
}

// readAt returns the history of rows up to entry to, where the end state's
// read ended, and the triggers of the hooks that fired from entry from on,
// where it began. What came after the read is not in the end state the
// oracle compares, and must not be in the history it compares with it: a
// plan's restart that came only then (its moment, an operator's poll, came
// later than in the learning run) made the new life's leader-election lock
// after the read, so that the lock was no record of the end state
// (LeaderRecord) while its create counted, and the oracle found "create
// ... configmaps/...-leader-election: 1 in the references, 2 here".
func readAt(rows []record.Row, from, to int) (History, []string) {
	to, from = min(to, len(rows)), min(from, len(rows))
	var late []string
	for _, r := range rows[from:] {
		if r.Hook != nil {
			late = append(late, r.Hook.Trigger)
		}
	}
	return HistoryOf(rows[:to]), late
}
