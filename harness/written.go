package harness

import (
	"encoding/json"
)

// noteWritten keeps, per object, what the last successful write left: the
// resourceVersion its answer carried, or that the object is gone. A cached
// controller's cache must show the same before the controller reads from
// it (cache.go). Call it with r.mu held.
func (r *Recorder) noteWritten(key objectKey, x *Exchange, code int, body []byte) {
	if !writeVerbs[x.Verb] || code < 200 || code > 299 || body == nil {
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
	var obj struct {
		Kind     string `json:"kind"`
		Metadata struct {
			ResourceVersion   string   `json:"resourceVersion"`
			DeletionTimestamp *string  `json:"deletionTimestamp"`
			Finalizers        []string `json:"finalizers"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &obj) == nil && obj.Kind != "Status" && obj.Metadata.DeletionTimestamp != nil && len(obj.Metadata.Finalizers) > 0 {
		r.writes[key] = seenVersion{rv: obj.Metadata.ResourceVersion}
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
