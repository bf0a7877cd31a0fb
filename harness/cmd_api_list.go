package harness

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The list command, which keeps each list as a snapshot, and the assertions
// on such lists.
func init() {
	register(&Command{
		Name: "list", Args: "ACTOR RESOURCE SNAPSHOT [resourceVersion=RV] [resourceVersionMatch=NotOlderThan|Exact] [limit=N] [continue=TOKEN]", Group: "write", MinArgs: 3, MaxArgs: 7,
		Summary:  "LIST RESOURCE in the scenario's namespace as ACTOR and keep the list as SNAPSHOT: its items, metadata.resourceVersion and metadata.continue",
		Negation: NegAPIError, Run: runList,
	})
	register(&Command{
		Name: "listed", Args: "SNAPSHOT [NAME...]", Group: "assert", MinArgs: 1, MaxArgs: -1,
		Summary: "assert that the list SNAPSHOT holds exactly the objects NAME..., in that order",
		Run:     runListed,
	})
	register(&Command{
		Name: "continues", Args: "SNAPSHOT", Group: "assert", MinArgs: 1, MaxArgs: 1,
		Summary:  "assert that the list SNAPSHOT carries a continue token (there is more to read); \"!\" asserts that it does not",
		Negation: NegSelf, Run: runContinues,
	})
}

var listOptions = []string{"resourceVersion", "resourceVersionMatch", "limit", "continue"}

func runList(sc *Scenario, inv Invocation) error {
	a, err := sc.Actor(inv.Args[0])
	if err != nil {
		return usageErr("%v", err)
	}
	gvr, namespaced, err := sc.cp.resource(inv.Args[1])
	if err != nil {
		return usageErr("%v", err)
	}
	opts, err := parseOptions(inv.Args[3:], listOptions)
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
			return usageErr("bad limit=%s: want a whole number", s)
		}
	}
	if err := sc.holdHistory(inv); err != nil {
		return err
	}
	list, err := sc.resourceClient(a, ref{gvr: gvr, namespaced: namespaced}).List(sc.ctx, lo)
	if err != nil {
		return err
	}
	sc.keepSnapshot(inv.Args[2], &unstructured.Unstructured{Object: list.UnstructuredContent()})
	return nil
}

// parseOptions reads KEY=VALUE arguments whose keys are among allowed.
func parseOptions(args []string, allowed []string) (map[string]string, error) {
	opts := map[string]string{}
	for _, arg := range args {
		k, v, ok := strings.Cut(arg, "=")
		if !ok {
			return nil, usageErr("bad option %q: want KEY=VALUE, with KEY one of %s", arg, strings.Join(allowed, ", "))
		}
		if !slices.Contains(allowed, k) {
			return nil, usageErr("unknown option %q%s; options are %s", k, suggest(k, allowed), strings.Join(allowed, ", "))
		}
		if _, dup := opts[k]; dup {
			return nil, usageErr("option %s given twice", k)
		}
		opts[k] = v
	}
	return opts, nil
}

// items returns the items of the list snapshot called name.
func (sc *Scenario) items(name string) ([]string, error) {
	snap, err := sc.snapshot(name)
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

func runListed(sc *Scenario, inv Invocation) error {
	got, err := sc.items(inv.Args[0])
	if err != nil {
		return err
	}
	want := inv.Args[1:]
	if !slices.Equal(got, want) {
		return fmt.Errorf("list %s: items (-want +got)\n%s", inv.Args[0], cmp.Diff(want, got))
	}
	return nil
}

func runContinues(sc *Scenario, inv Invocation) error {
	if _, err := sc.items(inv.Args[0]); err != nil {
		return err
	}
	snap, _ := sc.snapshot(inv.Args[0])
	token, _, _ := unstructured.NestedString(snap.Object, "metadata", "continue")
	switch {
	case inv.Neg && token != "":
		return fmt.Errorf("list %s: want no continue token, it has one: there is more to read", inv.Args[0])
	case !inv.Neg && token == "":
		return fmt.Errorf("list %s: want a continue token, it has none: the server sent everything", inv.Args[0])
	}
	return nil
}
