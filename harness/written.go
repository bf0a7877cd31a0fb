package harness

// noteWritten keeps, per object, what the last successful write left: the
// resourceVersion its answer carried, or that the object is gone. A cached
// controller's cache must show the same before the controller reads from
// it (cache.go). a is what the recorder read of the answer's body, nil when
// there was none. Call it with r.mu held.
func (r *Recorder) noteWritten(key objectKey, x *Exchange, code int, a *answer) {
	if !writeVerbs[x.Verb] || code < 200 || code > 299 || a == nil {
		return
	}
	if r.writes == nil {
		r.writes = map[objectKey]seenVersion{}
	}
	if x.Verb != "delete" {
		if x.GotRV != "" {
			r.writes[key] = seenVersion{rv: x.GotRV}
		}
		return
	}
	// A delete answers with the object while finalizers hold it (being
	// deleted, with a new resourceVersion), and otherwise with the object
	// as it was removed, or a Status.
	if !a.status && a.deleting {
		r.writes[key] = seenVersion{rv: a.rv}
		return
	}
	r.writes[key] = seenVersion{gone: true}
}

// written returns what the last successful write of each object left.
func (r *Recorder) written() map[objectKey]seenVersion {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[objectKey]seenVersion, len(r.writes))
	for k, v := range r.writes {
		out[k] = v
	}
	return out
}
