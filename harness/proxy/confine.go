package proxy

import (
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Confinement keeps what an actor reads of every namespace to one
// namespace: most operators list and watch their resources in all
// namespaces, and on an API server that other scenarios share, that is
// their objects too. A LIST or WATCH of a namespaced resource that the API
// server would serve across every namespace is sent as one of Namespace:
// GET /api/v1/R, /apis/G/V/R and the deprecated .../watch/R; the same with
// an empty namespace, /api/v1/namespaces//R (what the Python and
// JavaScript clients send for a namespace of "", which kube-apiserver
// reads as every namespace); and the deprecated watch of one name in every
// namespace, .../watch/namespaces//R/NAME. Each becomes
// /api/v1/namespaces/NS/R (or .../watch/namespaces/NS/R[/NAME]), query
// and all. The answer has the shape the client asked for: a list of the
// same kind, a watch of the same events, with the items of Namespace alone.
//
// Nothing else is rewritten, so that what the API server refuses it still
// refuses: a GET or a write of one object in another namespace goes as it
// came, and so does one with an empty namespace (the API server answers
// 400, "Namespace parameter required", and writes nothing, a delete of a
// collection included), a read of a cluster-scoped resource or of one that
// Namespaced does not know, and a path the API server does not route as a
// resource (one that begins with two slashes, a watch of one name outside
// any namespace: 404). The path is read as the API server reads it, decoded
// and split at every slash, the slashes at its end dropped and empty
// segments kept; TestConfinedPaths holds it to what a real API server
// answers, on a corpus of every client's requests and malformed ones.
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

// path returns the path a request of method to path (decoded, as
// url.URL.Path holds it) is sent to, and whether that is another path than
// path.
func (c Confinement) path(method, path string) (string, bool) {
	if c.Namespace == "" || c.Namespaced == nil || method != http.MethodGet {
		return path, false
	}
	// The API server routes a resource request by its path's prefix: one
	// slash, then api or apis. Two slashes find no route (404).
	if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") {
		return path, false
	}
	// Split as the API server's RequestInfoFactory does: an empty segment
	// is a segment (namespaces//R is a namespace of "").
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
	prefix = prefix[:len(prefix):len(prefix)] // appends below must not write into parts
	watch := len(parts) >= 2 && parts[0] == "watch"
	if watch {
		prefix, parts = append(prefix, "watch"), parts[1:]
	}
	// What the API server serves across every namespace: the resource
	// alone, or the resource after an empty namespace, and for the
	// deprecated watch, one name after an empty namespace.
	var rest []string
	switch {
	case len(parts) == 1:
		rest = parts
	case len(parts) >= 3 && parts[0] == "namespaces" && parts[1] == "":
		rest = parts[2:]
		if namespaceSubresource(rest[0]) {
			return path, false // namespaces//status is a Namespace's, not every namespace's
		}
		if len(rest) > 2 || len(rest) == 2 && !watch {
			// One object, or its subresource: without a namespace the
			// API server refuses it (400, or 404 where it routes none).
			return path, false
		}
	default:
		return path, false
	}
	gvr.Resource = rest[0]
	if gvr.Resource == "" || gvr.Resource == "namespaces" || !c.Namespaced(gvr) {
		return path, false
	}
	return "/" + strings.Join(append(append(prefix, "namespaces", c.Namespace), rest...), "/"), true
}

// namespaceSubresource reports whether s, after namespaces/NAME, is a
// subresource of the Namespace NAME (status, finalize) rather than a
// resource in it, as the API server's RequestInfoFactory decides.
func namespaceSubresource(s string) bool { return s == "status" || s == "finalize" }

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
