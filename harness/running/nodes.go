package running

import (
	"net/http"
	"strings"

	"github.com/racekit/racekit/harness/language"
)

// A scenario's own nodes. Nodes are cluster-scoped, and scenarios run side
// by side on one API server: left alone, each scenario's scheduler would
// see every scenario's nodes and bind its pods to another scenario's
// kubelet, and kube-controller-manager's node lifecycle controller would
// act on nodes that are not its scenario's.
//
// The namespace confinement (confine.go) cannot help: a node has no
// namespace. So each node a scenario runs (node NAME) is named
// NAME.NAMESPACE, unique on the API server, and carries the label
// ScenarioLabel=NAMESPACE, which its kubelet registers it with
// (--node-labels). Every LIST and WATCH of nodes by an actor that runs on
// its own (a process through the racing proxy, a controller started in
// process) is sent with that label added to its label selector. The
// scheduler's informer then lists and watches the scenario's nodes alone,
// as the node lifecycle controller's and the garbage collector's do, and
// a kubelet's list of its own node (fieldSelector=metadata.name=...) is
// unchanged in effect. A label selector, rather than a rewrite of the
// answer, leaves the API server to filter, in lists and in watches alike
// (an object that stops matching is a DELETED event, as the watch cache
// sends it), and keeps resourceVersions, continue tokens and bookmarks the
// API server's own.
//
// What is not rewritten: a GET of one node by name (another scenario's
// node can be read, as an object of another namespace can), writes, and
// the harness's own actors' calls in process, which name their objects.

// ScenarioLabel is the label that marks a cluster-scoped object as one
// scenario's; its value is the scenario's namespace.
const ScenarioLabel = "racekit.dev/scenario"

// ownNodes returns next with every LIST and WATCH of nodes it carries
// selecting sc's nodes alone: outermost in an actor's transport, so that
// the hooks and the recorder see the request as the API server gets it.
func ownNodes(sc *language.Scenario, next http.RoundTripper) http.RoundTripper {
	return nodeView{selector: ScenarioLabel + "=" + sc.Namespace, next: next}
}

// nodeView adds selector to the label selector of each list and watch of
// nodes.
type nodeView struct {
	selector string
	next     http.RoundTripper
}

func (t nodeView) RoundTrip(req *http.Request) (*http.Response, error) {
	q, ok := nodesQuery(req, t.selector)
	if !ok {
		return t.next.RoundTrip(req)
	}
	// A RoundTripper must not change the request it was given.
	req = req.Clone(req.Context())
	req.URL.RawQuery = q
	return t.next.RoundTrip(req)
}

// nodesQuery returns the query req is sent with when it reads the
// collection of nodes (GET /api/v1/nodes, or the deprecated
// /api/v1/watch/nodes), with selector added to its labelSelector, and
// false for any other request.
func nodesQuery(req *http.Request, selector string) (string, bool) {
	if req.Method != http.MethodGet {
		return "", false
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	if len(parts) == 4 && parts[0] == "api" && parts[2] == "watch" {
		parts = []string{parts[0], parts[1], parts[3]}
	}
	if len(parts) != 3 || parts[0] != "api" || parts[1] != "v1" || parts[2] != "nodes" {
		return "", false
	}
	q := req.URL.Query()
	if have := q.Get("labelSelector"); have != "" {
		selector = have + "," + selector
	}
	q.Set("labelSelector", selector)
	return q.Encode(), true
}

// nodeName is the name on the API server of the scenario's node called
// name: unique among scenarios, and readable in a trace.
func nodeName(sc *language.Scenario, name string) string {
	return name + "." + sc.Namespace
}
