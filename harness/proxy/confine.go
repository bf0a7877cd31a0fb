package proxy

import (
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Confinement keeps what an actor reads of every namespace to one
// namespace: most operators list and watch their resources in all
// namespaces, and on an API server that other scenarios share, that is
// their objects too. A LIST or WATCH of a namespaced resource across all
// namespaces (GET /api/v1/R, /apis/G/V/R, and the deprecated .../watch/R)
// is sent as one of Namespace (/api/v1/namespaces/NS/R, ...). The answer
// has the shape the client asked for: a list of the same kind, a watch of
// the same events, with the items of Namespace alone. Nothing else is
// rewritten: a GET or a write of one object in another namespace goes as
// it came, and so does a read of a cluster-scoped resource or of one that
// Namespaced does not know.
//
// What comes after the proxy (the actor's transport, its hooks and its
// recorder) sees the request as rewritten.
type Confinement struct {
	// Namespace is where reads of every namespace are kept; "" confines
	// nothing.
	Namespace string
	// Namespaced reports whether the API server serves resource per
	// namespace, as its discovery (a REST mapper) says; false for a
	// resource it does not know, which is then not rewritten.
	Namespaced func(resource schema.GroupVersionResource) bool
}

// path returns the path a request of method to path is sent to, and
// whether that is another path than path.
func (c Confinement) path(method, path string) (string, bool) {
	if c.Namespace == "" || c.Namespaced == nil || method != http.MethodGet {
		return path, false
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var gvr schema.GroupVersionResource
	var prefix []string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		gvr.Version, prefix, parts = parts[1], parts[:2], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		gvr.Group, gvr.Version, prefix, parts = parts[1], parts[2], parts[:3], parts[3:]
	default:
		return path, false
	}
	if len(parts) == 2 && parts[0] == "watch" {
		prefix, parts = append(prefix[:len(prefix):len(prefix)], "watch"), parts[1:]
	}
	// A collection of every namespace: one segment, the resource.
	if len(parts) != 1 || parts[0] == "" || parts[0] == "namespaces" {
		return path, false
	}
	gvr.Resource = parts[0]
	if !c.Namespaced(gvr) {
		return path, false
	}
	return "/" + strings.Join(append(prefix[:len(prefix):len(prefix)], "namespaces", c.Namespace, gvr.Resource), "/"), true
}

// confine rewrites req's URL in place, as the proxy does before a request
// goes on.
func (c Confinement) confine(req *http.Request) {
	if p, ok := c.path(req.Method, req.URL.Path); ok {
		req.URL.Path, req.URL.RawPath = p, ""
	}
}

// Wrap returns next with c applied to each request it carries, for
// rest.Config.Wrap: the same confinement for a controller that runs in
// this process as the proxy gives one that runs as a process of its own.
func (c Confinement) Wrap(next http.RoundTripper) http.RoundTripper {
	return confined{c: c, next: next}
}

type confined struct {
	c    Confinement
	next http.RoundTripper
}

func (t confined) RoundTrip(req *http.Request) (*http.Response, error) {
	p, ok := t.c.path(req.Method, req.URL.Path)
	if !ok {
		return t.next.RoundTrip(req)
	}
	// A RoundTripper must not change the request it was given.
	req = req.Clone(req.Context())
	req.URL.Path, req.URL.RawPath = p, ""
	return t.next.RoundTrip(req)
}
