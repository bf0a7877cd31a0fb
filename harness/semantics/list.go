package semantics

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/racekit/racekit/harness/language"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The list command, which keeps each list as a snapshot, and the assertions
// on such lists.
var listCommands = []*language.Command{
	{
		Name: "list", Args: "ACTOR RESOURCE SNAPSHOT [resourceVersion=RV] [resourceVersionMatch=NotOlderThan|Exact] [limit=N] [continue=TOKEN]", Group: "write", MinArgs: 3, MaxArgs: 7,
		Summary:  "LIST RESOURCE in the scenario's namespace as ACTOR and keep the list as SNAPSHOT: its items, metadata.resourceVersion and metadata.continue",
		Negation: language.NegAPIError, Run: runList,
	},
	{
		Name: "listed", Args: "SNAPSHOT [NAME...]", Group: "assert", MinArgs: 1, MaxArgs: -1,
		Summary: "assert that the list SNAPSHOT holds exactly the objects NAME..., in that order",
		Run:     runListed,
	},
	{
		Name: "continues", Args: "SNAPSHOT", Group: "assert", MinArgs: 1, MaxArgs: 1,
		Summary:  "assert that the list SNAPSHOT carries a continue token (there is more to read); \"!\" asserts that it does not",
		Negation: language.NegSelf, Run: runContinues,
	},
}

var listOptions = []string{"resourceVersion", "resourceVersionMatch", "limit", "continue"}

func runList(sc *language.Scenario, inv language.Invocation) error {
	a, err := sc.Actor(inv.Args[0])
	if err != nil {
		return language.UsageError("%v", err)
	}
	gvr, namespaced, err := sc.ControlPlane().Resource(inv.Args[1])
	if err != nil {
		return language.UsageError("%v", err)
	}
	opts, err := language.ParseOptions(inv.Args[3:], listOptions)
	if err != nil {
		return err
	}
	lo := metav1.ListOptions{
		ResourceVersion:      opts["resourceVersion"],
		ResourceVersionMatch: metav1.ResourceVersionMatch(opts["resourceVersionMatch"]),
		Continue:             opts["continue"],
	}
	if s, ok := opts["limit"]; ok {
		if lo.Limit, err = strconv.ParseInt(s, 10, 64); err != nil {
			return language.UsageError("bad limit=%s: want a whole number", s)
		}
	}
	if err := holdHistory(sc, inv); err != nil {
		return err
	}
	list, err := sc.ResourceClient(a, language.Ref{GVR: gvr, Namespaced: namespaced}).List(sc.Context(), lo)
	if err != nil {
		return err
	}
	sc.KeepSnapshot(inv.Args[2], &unstructured.Unstructured{Object: list.UnstructuredContent()})
	return nil
}

// items returns the items of the list snapshot called name.
func items(sc *language.Scenario, name string) ([]string, error) {
	snap, err := sc.Snapshot(name)
	if err != nil {
		return nil, err
	}
	items, _, err := unstructured.NestedSlice(snap.Object, "items")
	if err != nil || !strings.HasSuffix(snap.GetKind(), "List") {
		return nil, fmt.Errorf("snapshot %s is a %s, not a list; take one with list ACTOR RESOURCE %s", name, snap.GetKind(), name)
	}
	var names []string
	for _, it := range items {
		m, _ := it.(map[string]any)
		names = append(names, (&unstructured.Unstructured{Object: m}).GetName())
	}
	return names, nil
}

func runListed(sc *language.Scenario, inv language.Invocation) error {
	got, err := items(sc, inv.Args[0])
	if err != nil {
		return err
	}
	want := inv.Args[1:]
	if !slices.Equal(got, want) {
		return language.Mismatched("list "+inv.Args[0], strings.Join(want, " "), strings.Join(got, " "),
			fmt.Errorf("list %s: items (-want +got)\n%s", inv.Args[0], cmp.Diff(want, got)))
	}
	return nil
}

func runContinues(sc *language.Scenario, inv language.Invocation) error {
	if _, err := items(sc, inv.Args[0]); err != nil {
		return err
	}
	snap, _ := sc.Snapshot(inv.Args[0])
	token, _, _ := unstructured.NestedString(snap.Object, "metadata", "continue")
	switch {
	case inv.Neg && token != "":
		return fmt.Errorf("list %s: want no continue token, it has one: there is more to read", inv.Args[0])
	case !inv.Neg && token == "":
		return fmt.Errorf("list %s: want a continue token, it has none: the server sent everything", inv.Args[0])
	}
	return nil
}
