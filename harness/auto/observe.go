package auto

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/racekit/racekit/harness/language"
)

// observed is what auto-observe read at the end of a run.
type observed struct {
	mu    sync.Mutex
	state State
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
	st := State{Read: true, Objects: map[string]map[string]string{}, History: HistoryOf(sc.Trace().Rows())}
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
	o := observedKey.Of(sc)
	o.mu.Lock()
	o.state = st
	o.mu.Unlock()
	return nil
}

// Observed returns what the scenario's auto-observe read; its Read is
// false when none ran. Its history is the whole trace's, counted when
// the script ended.
func Observed(sc *language.Scenario) State {
	o := observedKey.Peek(sc)
	if o == nil {
		return State{History: HistoryOf(sc.Trace().Rows())}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	st := o.state
	st.History = HistoryOf(sc.Trace().Rows())
	return st
}
