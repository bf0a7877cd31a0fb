package record

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/racekit/racekit/hooks"
)

// Exchange is one request and its response, as seen on the wire.
type Exchange struct {
	Seq int
	hooks.Call
	// SentRV is the resourceVersion the request carried: in the object's
	// metadata, in a patch, in delete preconditions, or in the query.
	SentRV string
	// SentUID is a uid precondition the request carried.
	SentUID string
	// Code is the HTTP status; zero when the request failed in transport.
	Code int
	// Reason is the Status reason of a failed call ("Conflict"), or the
	// HTTP status text of a successful one ("OK"), or of a failed one
	// whose Status names no reason (NoReason). It is "" when the reason is
	// unknown: ReasonUnknown says why.
	Reason string
	// NoReason is set when a failed call's Status named no reason: Reason
	// shows the HTTP status text, which no rule takes for a reason.
	NoReason bool
	// ReasonUnknown says why a failed call's reason is unknown, such as
	// "body in application/yaml not decoded": the recorder could not read
	// its body as a Status.
	ReasonUnknown string
	// Message is the Status message of a failed call.
	Message string
	// GotRV and GotUID come from the response object's metadata.
	GotRV  string
	GotUID string
	// Shown is what the answer showed the actor of other objects than
	// the one it names: a list's items, and each event of a watch as the
	// actor read it. No rendering of the trace shows it; the referee
	// reads it (package referee's check.go).
	Shown []Shown
	// WatchEnded is set, for a watch, once its stream has ended: the actor
	// read its last byte or an error, or closed it. WatchBlind is set when
	// the recorder cannot read the stream's events (a media type it does
	// not decode, or a stream that stopped making sense): Shown is then not
	// all that the watch showed, and no wait may take it for caught up.
	WatchEnded, WatchBlind bool
	// Selective is set for a list or a watch that a label selector, or a
	// field selector other than one name (Call.Name), narrows: what it
	// shows is not every object of its resource.
	Selective bool
	// InitialEvents is set for a watch-list (sendInitialEvents=true): its
	// first events are the objects there are, and a bookmark ends them.
	InitialEvents bool
	// Err is a transport error, when there was no response.
	Err string
	// Service names the service outside the API server the call went to
	// (Instance.HTTPClient); "" for the API server.
	Service string
	// Foreign is set when the call was in a namespace other than the
	// scenario's (Call.Namespace names it; Recorder.SetNamespace): another
	// scenario's objects, which no hook, assertion or rule of this one
	// counts (Trace.Own), and which every rendering shows with their
	// namespace (Row.OtherNamespace).
	Foreign bool

	Start    time.Time
	Duration time.Duration
}

// Shown is one object a read showed its actor: an item of a list answer,
// or the object of a watch event the actor read.
type Shown struct {
	Namespace, Name string
	// RV is the object's resourceVersion (in a Row, its symbol).
	RV string
	// Rev is RV as a number, an etcd revision, so that the referee can
	// tell an older version from a newer one; 0 when it is no number. Only
	// rows carry it.
	Rev uint64
	// Event is the watch event's type (ADDED, MODIFIED, DELETED,
	// BOOKMARK, ERROR); "" for a list item.
	Event string
	// After is, for a watch event, the Seq of the last exchange sent
	// before the actor read the event: the event came before every later
	// exchange.
	After int
}

// HookFiring is a trace entry for a hook whose action ran.
type HookFiring struct {
	ID      int
	Trigger string // "after controller get deployments/web 1st"
	Action  string // "annotate bob deployments/web team=blue"
	// Caller is the actor whose call fired the hook.
	Caller string `json:"caller,omitempty"`
}

// Entry is one line of a trace: an exchange, a hook firing, a change of
// what an actor is shown (view.go), or a wait's evidence that what runs on
// its own settled (settle.go).
type Entry struct {
	Exchange *Exchange
	Hook     *HookFiring
	View     *ViewChange
	Settled  *Settled
}

func (x *Exchange) fill(code int, a answer, decoded bool, contentType string, n int) {
	x.Code = code
	if decoded && !a.status {
		x.GotRV, x.GotUID = a.rv, a.uid
		if a.list && code < 300 {
			x.Shown = a.shown()
		}
	}
	switch {
	case code < 300 || (decoded && a.status && a.reason != ""):
		x.Reason = statusText(code)
		if a.status && code >= 300 {
			x.Reason, x.Message = a.reason, a.message
		}
	case x.Service != "":
		// No API server: there is no Status to read a reason from, and
		// the HTTP status is all there is.
		x.Reason = statusText(code)
	case decoded && a.status:
		x.Reason, x.NoReason, x.Message = statusText(code), true, a.message
	case code < 400:
		x.Reason = statusText(code)
	case n == 0:
		x.ReasonUnknown = "no body"
	case !decoded:
		t := mediaType(contentType)
		if t == "" {
			t = "no media type"
		}
		x.ReasonUnknown = "body in " + t + " not decoded"
	default:
		x.ReasonUnknown = "the body is no Status"
	}
}

// sentVersion finds the resourceVersion and uid a request body pins: the
// object's metadata (update, merge and strategic patches), DeleteOptions
// preconditions, or the value of a JSON patch operation on
// /metadata/resourceVersion.
func sentVersion(body []byte) (rv, uid string) {
	var obj struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Preconditions struct {
			ResourceVersion *string `json:"resourceVersion"`
			UID             *string `json:"uid"`
		} `json:"preconditions"`
	}
	if json.Unmarshal(body, &obj) == nil {
		rv = obj.Metadata.ResourceVersion
		if p := obj.Preconditions.ResourceVersion; p != nil {
			rv = *p
		}
		if p := obj.Preconditions.UID; p != nil {
			uid = *p
		}
		return rv, uid
	}
	var ops []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if json.Unmarshal(body, &ops) == nil {
		for _, op := range ops {
			if op.Path == "/metadata/resourceVersion" {
				var s string
				if json.Unmarshal(op.Value, &s) == nil {
					rv = s
				} else {
					rv = string(op.Value)
				}
			}
		}
	}
	return rv, ""
}

func statusText(code int) string {
	var b []byte
	for _, r := range http.StatusText(code) {
		if r != ' ' && r != '-' {
			b = append(b, string(r)...)
		}
	}
	return string(b)
}

// IsConflict reports whether an answer with code and Status reason is a
// 409 Conflict: the object changed since it was read. (A 409
// AlreadyExists, a create of a name that is taken, is no race at all.)
func IsConflict(code int, reason string) bool {
	return code == 409 && reason == "Conflict"
}

// Conflicted reports whether x was refused with 409 Conflict, its Status
// says so.
func (x *Exchange) Conflicted() bool {
	return IsConflict(x.Code, x.Reason) && !x.NoReason
}
