package record

import (
	"fmt"
	"strings"
)

// ViewChange is a trace entry for a change in what an actor is shown of a
// resource, which no exchange shows by itself: a hold of its watch events,
// a release, a list asked for as of the past, a mark of the present. The
// scenario makes each at a moment it chose, so each sits in the trace where
// it happened, between the exchanges, as a hook's firing does; without
// them, a reader of the trace could not tell why a controller acted on an
// old copy.
type ViewChange struct {
	// Change says what happened.
	Change ViewKind `json:"change"`
	// Actor and Resource are whose view of what (a plural resource name,
	// such as configmaps); a mark has neither.
	Actor    string `json:"actor,omitempty"`
	Resource string `json:"resource,omitempty"`
	// At names the past that a hold at= or a list asked for as of it
	// serves: a mark, a snapshot, or a resourceVersion, which a Row shows
	// as history (rv*), since what it equals depends on the rest of the
	// cluster.
	At string `json:"at,omitempty"`
	// Name is a mark's name.
	Name string `json:"name,omitempty"`
	// Cache names the cached controller whose informer cache holds, for
	// the cached controller's own hold; "" for a hold at the wire.
	Cache string `json:"cache,omitempty"`
}

// ViewKind is what a ViewChange did.
type ViewKind string

// The changes a view goes through.
const (
	// ViewHold: from here on the actor's watch events of the resource
	// are kept back, in order.
	ViewHold ViewKind = "hold"
	// ViewRelease: what was kept back is delivered, in order, and later
	// events pass.
	ViewRelease ViewKind = "release"
	// ViewRelist: each held watch ends with an ERROR event 410 Expired,
	// what was kept back is dropped, and the actor lists again.
	ViewRelist ViewKind = "relist"
	// ViewStep: the oldest event kept back is delivered, and read by the
	// actor; the rest stay held (catch-up, one event at a time).
	ViewStep ViewKind = "step"
	// ViewList: the actor's list of the resource is sent as of At
	// (resourceVersion=At&resourceVersionMatch=Exact): the API server
	// answers from etcd's history, or its watch cache's.
	ViewList ViewKind = "list"
	// ViewWatchList: the actor's watch-list (a watch that starts with the
	// present state, sendInitialEvents=true) is sent as of At, exactly;
	// kube-apiserver starts a watch-list at the present only, and refuses
	// it with 422 Invalid, so that the actor's informer falls back to a
	// list, which the next ViewList serves.
	ViewWatchList ViewKind = "watch-list"
	// ViewMark: Name names the revision of the whole store now, for a
	// later hold at=.
	ViewMark ViewKind = "mark"
)

// String renders the change as the trace shows it, after "view: ".
func (v ViewChange) String() string {
	in := ""
	if v.Cache != "" {
		in = " in the cache of " + v.Cache
	}
	switch v.Change {
	case ViewHold:
		at := ""
		if v.At != "" {
			at = " at=" + v.At
		}
		return fmt.Sprintf("hold %s %s%s%s", v.Actor, v.Resource, at, in)
	case ViewRelease:
		return fmt.Sprintf("release %s %s%s", v.Actor, v.Resource, in)
	case ViewRelist:
		return fmt.Sprintf("release %s %s relist: each held watch ends with 410 Expired, and what it held is dropped", v.Actor, v.Resource)
	case ViewStep:
		return fmt.Sprintf("%s is shown the oldest event of %s kept back, and the rest stay held", v.Actor, v.Resource)
	case ViewList:
		return fmt.Sprintf("%s's list of %s is sent as of %s (resourceVersionMatch=Exact)", v.Actor, v.Resource, v.At)
	case ViewWatchList:
		return fmt.Sprintf("%s's watch-list of %s is sent as of %s, which the API server refuses (a watch-list starts at the present): its informer lists instead", v.Actor, v.Resource, v.At)
	case ViewMark:
		return "mark " + v.Name
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s %s", v.Change, v.Actor, v.Resource))
}

// NoteView adds a change of an actor's view to the trace.
func (r *Recorder) NoteView(v ViewChange) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, Entry{View: &v})
	r.pokeLocked()
}

// IsCall reports whether the row is an exchange, not a hook's firing, a
// change of a view or a wait's evidence of a settled life.
func (r Row) IsCall() bool { return r.Hook == nil && r.View == nil && r.Settled == nil }

// viewRow returns the row of v, its At rendered as the trace renders a
// list's resourceVersion.
func viewRow(v ViewChange) Row {
	v.At = historyRV(v.At)
	return Row{View: &v}
}
