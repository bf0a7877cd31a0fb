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
		Summary: "DELETE the collection of RESOURCE in the scenario's namespace as ACTOR, or the part the selectors select, in one call",
		Detail: "DELETE the collection of RESOURCE in the scenario's namespace as ACTOR (the verb deletecollection): every object of it, or those the selectors select, in one call; " +
			"the trace's copies of the collection's objects are then unknown, so assertions read them with a GET; " +
			"a cluster-scoped RESOURCE (customresourcedefinitions, namespaces) is refused, since its collection is every scenario's on the shared API server: delete the objects the scenario made one by one, with delete",
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
	if !namespaced {
		return language.UsageError("%s is cluster-scoped: its collection is not the scenario's but the API server's, which every scenario shares, and delete-collection would delete every scenario's %s; "+
			"delete-collection keeps to the scenario's namespace, so delete what the scenario made one by one, as in delete %s %s/NAME", inv.Args[1], inv.Args[1], inv.Args[0], inv.Args[1])
	}
	opts, err := language.ParseOptions(inv.Args[2:], deleteCollectionOptions)
	if err != nil {
		return err
	}
	lo := metav1.ListOptions{LabelSelector: opts["labelSelector"], FieldSelector: opts["fieldSelector"]}
	return sc.ResourceClient(a, language.Ref{GVR: gvr, Namespaced: namespaced}).DeleteCollection(sc.Context(), metav1.DeleteOptions{}, lo)
}
