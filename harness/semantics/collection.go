package semantics

import (
	"strings"

	"github.com/racekit/racekit/harness/language"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The write to a collection: a DELETE of a resource's collection, which
// deletes every object it selects at once (deletecollection).
var collectionCommands = []*language.Command{
	{
		Name: "delete-collection", Args: "ACTOR RESOURCE [labelSelector=SELECTOR] [fieldSelector=SELECTOR]", Group: "write", MinArgs: 2, MaxArgs: 4,
		Summary: "DELETE the collection of RESOURCE in the scenario's namespace as ACTOR (the verb deletecollection): every object of it, or those the selectors select, in one call; " +
			"the trace's copies of the collection's objects are then unknown, so assertions read them with a GET",
		Negation: language.NegAPIError, Hookable: true, Run: runDeleteCollection,
	},
}

var deleteCollectionOptions = []string{"labelSelector", "fieldSelector"}

func runDeleteCollection(sc *language.Scenario, inv language.Invocation) error {
	a, err := sc.Actor(inv.Args[0])
	if err != nil {
		return language.UsageError("%v", err)
	}
	if res, name, ok := strings.Cut(inv.Args[1], "/"); ok {
		return language.UsageError("%s names an object, not a collection: delete-collection %s %s deletes every object of %s; delete %s %s deletes %s alone",
			inv.Args[1], inv.Args[0], res, res, inv.Args[0], inv.Args[1], name)
	}
	gvr, namespaced, err := sc.ControlPlane().Resource(inv.Args[1])
	if err != nil {
		return language.UsageError("%v", err)
	}
	opts, err := language.ParseOptions(inv.Args[2:], deleteCollectionOptions)
	if err != nil {
		return err
	}
	lo := metav1.ListOptions{LabelSelector: opts["labelSelector"], FieldSelector: opts["fieldSelector"]}
	return sc.ResourceClient(a, language.Ref{GVR: gvr, Namespaced: namespaced}).DeleteCollection(sc.Context(), metav1.DeleteOptions{}, lo)
}
