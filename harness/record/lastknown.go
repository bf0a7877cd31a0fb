package record

import (
	"encoding/json"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Key names one Kubernetes object: its API group, plural resource,
// namespace ("" for cluster-scoped objects) and name.
type Key struct {
	Group, Resource, Namespace, Name string
}

// objectKeyOf returns the key of the object req addresses, and false for a
// request that addresses no single Kubernetes object (a collection, a list
// or a watch of one name, or a path outside the Kubernetes API, such as
// the registry's).
func objectKeyOf(req *http.Request, x *Exchange) (Key, bool) {
	if x.Name == "" || x.Resource == "" || x.Verb == "list" || x.Verb == "watch" {
		return Key{}, false
	}
	group, ok := apiGroup(req, x)
	if !ok {
		return Key{}, false
	}
	return Key{Group: group, Resource: x.Resource, Namespace: x.Namespace, Name: x.Name}, true
}

// apiGroup returns the API group of a resource request to the API server
// ("" for the core group), and false for any other request.
func apiGroup(req *http.Request, x *Exchange) (string, bool) {
	if x.Service != "" || x.Resource == "" {
		return "", false
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		return "", true
	case len(parts) >= 4 && parts[0] == "apis":
		return parts[1], true
	}
	return "", false
}

// latest is what the trace says an object holds: the body of the last
// answer the API server gave about it, when that answer is known to be the
// object as stored and nothing has touched the object since.
//
// The harness's assertions read it instead of sending a GET of their own
// (Scenario.read). It is sound because every request to a scenario's
// objects passes through the recorder, and nothing else writes them: the
// control plane runs no controllers (no garbage collector, no namespace
// controller) besides the scenario's own, whose calls are recorded too. A
// write to a collection changes objects it does not name, and makes what
// the trace knew of them unknown (collection.go).
type latest struct {
	// inflight counts the object's exchanges that await their answers.
	inflight int
	// overlapped is set when an exchange was sent while another was in
	// flight: their answers may then describe the object in either order.
	overlapped bool
	// body is the object as stored, or nil when unknown.
	body []byte
}

// sent notes that x, about the object key, is on its way. Anything but a
// GET may change the object, so what was known of it is no longer.
func (r *Recorder) sent(key Key, x *Exchange) {
	if r.objects == nil {
		r.objects = map[Key]*latest{}
	}
	l := r.objects[key]
	if l == nil {
		l = &latest{}
		r.objects[key] = l
	}
	if l.inflight > 0 || r.sweeping(key) {
		l.overlapped = true
	}
	l.inflight++
	if x.Verb != "get" {
		l.body = nil
	}
}

// answered notes x's answer: the status code and the body (nil for a
// transport error). Call it with r.mu held.
func (r *Recorder) answeredAbout(key Key, x *Exchange, req *http.Request, code int, body []byte) {
	l := r.objects[key]
	l.inflight--
	defer func() {
		if l.inflight == 0 {
			l.overlapped = false
		}
	}()
	// Alone in flight from its sending to its answer, x is the last word.
	if body != nil && !l.overlapped && l.inflight == 0 && storedObject(req, x, code, body) {
		l.body = body
		return
	}
	if x.Verb != "get" {
		l.body = nil // a write whose outcome cannot be read from its answer
	}
}

// storedObject reports whether body, the answer to x, is the object as the
// API server now stores it: a 2xx answer to a GET (not from the watch
// cache: no resourceVersion asked for), a create, an update or a patch of
// the object or its status, that was not a dry run and did not leave the
// object being deleted (whose next write may remove it).
func storedObject(req *http.Request, x *Exchange, code int, body []byte) bool {
	if code < 200 || code > 299 || (x.Subresource != "" && x.Subresource != "status") {
		return false
	}
	q := req.URL.Query()
	switch x.Verb {
	case "get":
		if q.Has("resourceVersion") {
			return false
		}
	case "create", "update", "patch":
		if q.Has("dryRun") {
			return false
		}
	default:
		return false
	}
	var head struct {
		Metadata struct {
			DeletionTimestamp *string `json:"deletionTimestamp"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return false
	}
	return head.Metadata.DeletionTimestamp == nil
}

// LastKnown returns the object key as the API server's last answer about
// it showed it, when that answer is still the object as stored; ok is
// false when the trace does not say.
func (r *Recorder) LastKnown(key Key) (obj *unstructured.Unstructured, ok bool) {
	r.mu.Lock()
	var body []byte
	if l := r.objects[key]; l != nil {
		body = l.body // a GET in flight changes nothing; a write has cleared it
	}
	r.mu.Unlock()
	if body == nil {
		return nil, false
	}
	obj = &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(body); err != nil {
		return nil, false
	}
	return obj, true
}
