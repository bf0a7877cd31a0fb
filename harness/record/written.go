package record

import "fmt"

// WriteVerbs are the verbs that change an object.
var WriteVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true}

// Version is what a write left of one object, or what a cache holds of it:
// its resourceVersion, or that it is gone.
type Version struct {
	RV   string
	Gone bool
}

// String renders v: "resourceVersion 12", or "it deleted".
func (v Version) String() string {
	if v.Gone {
		return "it deleted"
	}
	return fmt.Sprintf("resourceVersion %s", v.RV)
}

// noteWritten keeps, per object, what the last successful write left: the
// resourceVersion its answer carried, or that the object is gone. A cached
// controller's cache must show the same before the controller reads from
// it (package controllers' cache.go). a is what the recorder read of the answer's body, nil when
// there was none. Call it with r.mu held.
func (r *Recorder) noteWritten(key Key, x *Exchange, code int, a *answer) {
	if !WriteVerbs[x.Verb] || code < 200 || code > 299 || a == nil {
		return
	}
	if r.writes == nil {
		r.writes = map[Key]Version{}
	}
	if x.Verb != "delete" {
		if x.GotRV != "" {
			r.writes[key] = Version{RV: x.GotRV}
		}
		return
	}
	// A delete answers with the object while finalizers hold it (being
	// deleted, with a new resourceVersion), and otherwise with the object
	// as it was removed, or a Status.
	if !a.status && a.deleting {
		r.writes[key] = Version{RV: a.rv}
		return
	}
	r.writes[key] = Version{Gone: true}
}

// Written returns what the last successful write of each object left.
func (r *Recorder) Written() map[Key]Version {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[Key]Version, len(r.writes))
	for k, v := range r.writes {
		out[k] = v
	}
	return out
}
