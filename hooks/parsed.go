package hooks

import (
	"context"
	"net/http"
	"net/url"
)

// A request passes through several transports on its way to the API
// server (the calls in flight, the hooks, the recorder, the views), and
// each needs its Call. The first parses it and puts the Call in the
// request's context; the others read it there, so that a request is
// parsed once however many transports it passes, and all see one Call.

// parsedKey is the key of a request's parsed Call in its context.
type parsedKey struct{}

// parsed is a Call as parsed from one request: the request's URL (the
// pointer, which a request's shallow copies share and a Clone does not),
// method, path and query, by which a transport further on tells that its
// request is still the one parsed; and how it was parsed (service).
type parsed struct {
	url                 *url.URL
	method, path, query string
	service             bool
	call                Call
}

// Parsed returns actor's Call of req, a request to the API server, as
// ParseRequest derives it, and req carrying it in its context for the
// transports further on its way: when a transport before this one parsed
// req already, its Call, and req as it came.
func Parsed(actor string, req *http.Request) (*http.Request, Call) {
	return parsedAs(actor, req, false)
}

// ParsedService is Parsed for a request to a service outside the API
// server, as ParseServiceRequest derives its Call.
func ParsedService(actor string, req *http.Request) (*http.Request, Call) {
	return parsedAs(actor, req, true)
}

func parsedAs(actor string, req *http.Request, service bool) (*http.Request, Call) {
	if p, ok := req.Context().Value(parsedKey{}).(*parsed); ok && p.of(req, service) {
		c := p.call
		c.Actor = actor
		return req, c
	}
	var c Call
	if service {
		c = ParseServiceRequest(actor, req)
	} else {
		c = ParseRequest(actor, req)
	}
	p := &parsed{url: req.URL, method: req.Method, path: req.URL.Path, query: req.URL.RawQuery, service: service, call: c}
	return req.WithContext(context.WithValue(req.Context(), parsedKey{}, p)), c
}

// of reports whether p was parsed, as service says, from req: not from
// another request whose context req's derives from (a hook's action
// calls with the context of the call that fired it), nor from req before
// a transport rewrote it.
func (p *parsed) of(req *http.Request, service bool) bool {
	return p.service == service && p.url == req.URL && p.method == req.Method && p.path == req.URL.Path && p.query == req.URL.RawQuery
}
