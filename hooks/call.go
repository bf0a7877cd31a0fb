package hooks

import (
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Call describes one HTTP request in the terms a scenario uses: who made it,
// which verb, and which object. It is derived from the request alone, so the
// same Call is seen before the request is sent and after its response arrives.
type Call struct {
	// Actor is the name of the client that made the call.
	Actor string
	// Verb is the Kubernetes verb: get, list, watch, create, update, patch,
	// delete or deletecollection (or proxy). A non-resource request
	// (/version, discovery) has the lower-case HTTP method. Calls outside
	// the Kubernetes API (the external registry, for example) use the
	// Kubernetes verbs, derived the same way from the HTTP method and the
	// path (ParseServiceRequest).
	Verb string
	// Resource is the plural resource name, such as "deployments"; empty
	// for a non-resource request.
	Resource string
	// Namespace is empty for cluster-scoped objects.
	Namespace string
	// Name is empty for collections. A list or a watch that selects one
	// name (fieldSelector=metadata.name=NAME, as kubectl get NAME --watch
	// sends) has that name, as the API server's authorizer sees it.
	Name string
	// Subresource is the part after the name, such as "status" or "scale".
	Subresource string
	// Path is the URL path of a non-resource request to the API server,
	// such as /version or /apis (discovery); empty for a resource request.
	Path string
}

// Object returns the call's target as resource[/name[/subresource]], the form
// scenarios write it in, or the path of a non-resource request (/version).
func (c Call) Object() string {
	if c.Resource == "" && c.Path != "" {
		return c.Path
	}
	s := c.Resource
	if c.Name != "" {
		s += "/" + c.Name
	}
	if c.Subresource != "" {
		s += "/" + c.Subresource
	}
	return s
}

// String renders the call as "actor verb object".
func (c Call) String() string {
	return c.Actor + " " + c.Verb + " " + c.Object()
}

// ParseRequest derives the Call for req, a request to the API server made
// by actor, as kube-apiserver's RequestInfoFactory does
// (k8s.io/apiserver/pkg/endpoints/request, with the prefixes api and apis,
// api without a group): the decoded path split at every slash, empty
// segments kept (so /api/v1/namespaces//configmaps is a list of
// ConfigMaps in every namespace, as the API server serves it); resource
// requests under /api/VERSION and /apis/GROUP/VERSION, with the deprecated
// /watch/ and /proxy/ prefixes; namespaces/NAME/status and
// namespaces/NAME/finalize as a namespace's subresources; a GET of a
// collection a list or a watch as the watch parameter decodes with
// apimachinery's own conversion (any value but 0 and false, in any case,
// is a watch: the Python client sends watch=True), and the name a
// fieldSelector of metadata.name gives it. Anything else is a non-resource
// request (/version, /healthz, discovery), whose Call has the path and the
// lower-case method.
//
// The Call differs from the API server's RequestInfo in four ways, each on
// purpose, and TestParseRequestAgreesWithAPIServer checks that there are
// no others, on a corpus of every client's requests and malformed ones:
//   - A Namespace's own requests (namespaces/NAME, and its status and
//     finalize: a Call of namespaces whose Namespace would be its Name)
//     have no Namespace: a Namespace is cluster-scoped. RequestInfo gives
//     them NAME, as RBAC sees them.
//   - A method with no Kubernetes verb (OPTIONS) keeps its lower-case
//     name as the Verb, where RequestInfo has "".
//   - A /watch/ or /proxy/ prefix with nothing after it, which
//     RequestInfo refuses (the API server answers 500), is a non-resource
//     request.
//   - A create is named after the object in its body, which the API
//     server's authorizer does not do but scenarios do.
func ParseRequest(actor string, req *http.Request) Call {
	c := Call{Actor: actor}
	parts := splitPath(req.URL.Path)
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:] // api, VERSION
	case len(parts) >= 4 && parts[0] == "apis":
		parts = parts[3:] // apis, GROUP, VERSION
	default:
		return nonResource(c, req)
	}
	if parts[0] == "watch" || parts[0] == "proxy" {
		if len(parts) < 2 {
			return nonResource(c, req) // the API server refuses it
		}
		c.Verb, parts = parts[0], parts[1:]
	} else {
		c.Verb = methodVerb(req.Method)
	}
	// namespaces/NAME/status and namespaces/NAME/finalize are subresources of
	// a namespace; any other namespaces/NS/... path is namespaced.
	if parts[0] == "namespaces" && len(parts) > 1 {
		c.Namespace = parts[1]
		if len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
			parts = parts[2:]
		}
	}
	c.Resource = parts[0]
	if len(parts) > 1 {
		c.Name = parts[1]
	}
	if len(parts) > 2 && c.Verb != "proxy" {
		c.Subresource = parts[2]
	}
	if c.Name == "" && c.Verb == "get" {
		c.Verb, c.Name = collectionRead(req)
	}
	if c.Resource == "namespaces" && c.Namespace == c.Name {
		// A Namespace is cluster-scoped; the API server gives its
		// requests its own name as their namespace, as RBAC sees them.
		c.Namespace = ""
	}
	switch {
	case c.Name == "" && c.Verb == "delete":
		c.Verb = "deletecollection"
	case c.Name == "" && c.Verb == "create":
		// A create is sent to the collection; the object's name is in
		// the body. Scenarios name the object all the same.
		c.Name = bodyName(req)
	}
	return c
}

// nonResource is the Call of a request outside the API's resources.
func nonResource(c Call, req *http.Request) Call {
	c.Verb = strings.ToLower(req.Method)
	c.Path = req.URL.Path
	if c.Path == "" {
		c.Path = "/"
	}
	return c
}

// methodVerb is the verb of a resource request by its HTTP method, before
// a name-less get becomes a list or a watch and a name-less delete a
// deletecollection.
func methodVerb(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodGet, http.MethodHead:
		return "get"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return strings.ToLower(method)
}

// collectionRead returns what a GET of a collection is, as the API server
// decides it: a watch or a list, by the query's ListOptions as
// apimachinery's parameter codec decodes them, and the name that a
// fieldSelector of metadata.name=NAME selects. A query the codec refuses
// (limit=x) is still a watch when its first watch value is neither 0 nor
// false, in any case, and selects no name.
func collectionRead(req *http.Request) (verb, name string) {
	q := req.URL.Query()
	var opts metainternalversion.ListOptions
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, &opts); err != nil {
		opts = metainternalversion.ListOptions{}
		if v := q["watch"]; len(v) > 0 {
			switch strings.ToLower(v[0]) {
			case "false", "0":
			default:
				opts.Watch = true
			}
		}
	}
	verb = "list"
	if opts.Watch {
		verb = "watch"
	}
	if opts.FieldSelector != nil {
		if n, ok := opts.FieldSelector.RequiresExactMatch("metadata.name"); ok && len(content.IsPathSegmentName(n)) == 0 {
			name = n
		}
	}
	return verb, name
}

// splitPath returns the segments of a URL path as the API server's
// RequestInfoFactory splits it: slashes at either end are dropped, and an
// empty segment between two slashes is kept. /api/v1/namespaces//configmaps,
// which a client sends for a namespace of "", is a list of every namespace
// to the API server; skipping the empty segment would make it a get of the
// Namespace "configmaps".
func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// Verbs lists the verbs a Call can carry, for help and for checking
// scenario input.
var Verbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
