package record

import (
	"net/http"
	"strings"
)

// A write to a collection changes objects it does not name: a
// deletecollection deletes every object it selects, and a write to a
// CustomResourceDefinition changes how the API server serves every object
// of its resource (a new default, a version no longer served) or, deleted,
// deletes them all. The trace's copies of those objects (lastknown.go) are
// then unknown, and assertions read them with a GET. A create, though sent
// to a collection, changes only the object it creates.

// collection names the objects a write may change at once: those of one
// resource, in one namespace or, with namespace "", in all of them.
type collection struct {
	group, resource, namespace string
}

// holds reports whether the object key is one of c's.
func (c collection) holds(key Key) bool {
	return key.Group == c.group && key.Resource == c.resource && (c.namespace == "" || key.Namespace == c.namespace)
}

// collectionOf returns the objects x, sent as req, may change besides the
// one it names, and false when there are none.
func collectionOf(req *http.Request, x *Exchange) (collection, bool) {
	group, ok := apiGroup(req, x)
	if !ok {
		return collection{}, false
	}
	switch {
	case x.Verb == "deletecollection":
		return collection{group: group, resource: x.Resource, namespace: x.Namespace}, true
	case group == "apiextensions.k8s.io" && x.Resource == "customresourcedefinitions" && x.Name != "" && x.Verb != "get" && x.Verb != "create":
		// A CRD is named PLURAL.GROUP.
		if plural, crGroup, ok := strings.Cut(x.Name, "."); ok {
			return collection{group: crGroup, resource: plural}, true
		}
	}
	return collection{}, false
}

// sweepStarts notes that a write to c is on its way: what the trace knew
// of c's objects is no longer known, and an answer about one of them that
// crosses the write may describe it before or after. Call it with r.mu
// held.
func (r *Recorder) sweepStarts(c collection) {
	if r.sweeps == nil {
		r.sweeps = map[collection]int{}
	}
	r.sweeps[c]++
	for key, l := range r.objects {
		if c.holds(key) {
			l.body = nil
			if l.inflight > 0 {
				l.overlapped = true
			}
		}
	}
}

// sweeping reports whether a write to a collection that holds key is in
// flight. Call it with r.mu held.
func (r *Recorder) sweeping(key Key) bool {
	for c, n := range r.sweeps {
		if n > 0 && c.holds(key) {
			return true
		}
	}
	return false
}

// sweepEnds notes the answer to x, a write to c: code and a, what the
// recorder read of its body (nil when there was none). What the trace
// learnt of c's objects while the write was in flight is unknown too, and
// the objects a deletecollection answered with are gone, or being deleted
// (written.go). Call it with r.mu held.
func (r *Recorder) sweepEnds(c collection, x *Exchange, code int, a *answer) {
	if r.sweeps[c]--; r.sweeps[c] <= 0 {
		delete(r.sweeps, c)
	}
	for key, l := range r.objects {
		if c.holds(key) {
			l.body = nil
		}
	}
	if x.Verb != "deletecollection" || code < 200 || code > 299 || a == nil || !a.list {
		return
	}
	if r.writes == nil {
		r.writes = map[Key]Version{}
	}
	for _, it := range a.items {
		key := Key{Group: c.group, Resource: c.resource, Namespace: it.namespace, Name: it.name}
		if it.deleting {
			r.writes[key] = Version{RV: it.rv}
		} else {
			r.writes[key] = Version{Gone: true}
		}
	}
}
