package harness

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
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
	// HTTP status text of a successful one ("OK").
	Reason string
	// Message is the Status message of a failed call.
	Message string
	// GotRV and GotUID come from the response object's metadata.
	GotRV  string
	GotUID string
	// Err is a transport error, when there was no response.
	Err string
	// Service names the service outside the API server the call went to
	// (Instance.HTTPClient); "" for the API server.
	Service string

	Start    time.Time
	Duration time.Duration
}

// HookFiring is a trace entry for a hook whose action ran.
type HookFiring struct {
	ID      int
	Trigger string // "after controller get deployments/web 1st"
	Action  string // "annotate bob deployments/web team=blue"
	// Caller is the actor whose call fired the hook.
	Caller string `json:"caller,omitempty"`
}

// Entry is one line of a trace: an exchange or a hook firing.
type Entry struct {
	Exchange *Exchange
	Hook     *HookFiring
}

// Recorder keeps every exchange of one scenario, in the order the requests
// were sent, with the hook firings in between. It is safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	entries []Entry
	seq     int
	// objects holds what the trace says of each object (latest.go).
	objects map[objectKey]*latest
	// writes holds what each object's last successful write left
	// (written.go).
	writes map[objectKey]seenVersion
	// changed is closed, and forgotten, at the next change: what await
	// and idle wait on (await.go), instead of polling the trace.
	changed chan struct{}
}

// changes returns a channel that is closed at the recorder's next change:
// an exchange sent or answered, a hook firing, or a poke. Take it before
// looking at the trace, so that a change in between is not missed.
func (r *Recorder) changes() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return r.changed
}

// poke wakes whoever waits on changes, for news that is not an exchange,
// such as a running controller that returned.
func (r *Recorder) poke() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pokeLocked()
}

func (r *Recorder) pokeLocked() {
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// Wrap returns a function for rest.Config.Wrap that records every exchange
// actor makes.
func (r *Recorder) Wrap(actor string) func(http.RoundTripper) http.RoundTripper {
	return r.wrapService(actor, "")
}

// wrapService is Wrap for the calls to service, outside the API server.
func (r *Recorder) wrapService(actor, service string) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return &recordingTransport{actor: actor, service: service, rec: r, next: next}
	}
}

// Note adds a hook firing to the trace.
func (r *Recorder) Note(h HookFiring) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, Entry{Hook: &h})
	r.pokeLocked()
}

// Trace returns a copy of what has been recorded so far.
func (r *Recorder) Trace() Trace {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(Trace, len(r.entries))
	for i, e := range r.entries {
		if e.Exchange != nil {
			x := *e.Exchange
			e.Exchange = &x
		}
		out[i] = e
	}
	return out
}

// add records x, sent as req, as in flight.
func (r *Recorder) add(x *Exchange, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	x.Seq = r.seq
	r.entries = append(r.entries, Entry{Exchange: x})
	if key, ok := objectKeyOf(req, x); ok {
		r.sent(key, x)
	}
	r.pokeLocked()
}

// answer completes x, which add recorded: f fills in the answer under the
// recorder's lock, since Trace may copy x meanwhile. code and body are the
// answer's status and body (0 and nil when there was none, or it was not
// read); they tell what the object now holds.
func (r *Recorder) answer(x *Exchange, req *http.Request, code int, body []byte, f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f()
	if key, ok := objectKeyOf(req, x); ok {
		r.answeredAbout(key, x, req, code, body)
		r.noteWritten(key, x, code, body)
	}
	r.pokeLocked()
}

type recordingTransport struct {
	actor   string
	service string // "" for the API server
	rec     *Recorder
	next    http.RoundTripper
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	x := &Exchange{Call: hooks.ParseRequest(t.actor, req), Service: t.service}
	if q := req.URL.Query().Get("resourceVersion"); q != "" {
		x.SentRV = q
	}
	if req.Body != nil && req.Body != http.NoBody {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		rv, uid := sentVersion(body)
		if isProtobuf(req.Header.Get("Content-Type")) {
			rv, uid = sentVersionProtobuf(body)
		}
		if rv != "" || uid != "" {
			x.SentRV, x.SentUID = rv, uid
		}
	}
	x.Start = time.Now()
	t.rec.add(x, req)

	resp, err := t.next.RoundTrip(req)
	if err != nil {
		elapsed := time.Since(x.Start)
		t.rec.answer(x, req, 0, nil, func() { x.Duration, x.Err = elapsed, err.Error() })
		return nil, err
	}
	var got response
	var body []byte
	if x.Verb != "watch" {
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			elapsed := time.Since(x.Start)
			t.rec.answer(x, req, 0, nil, func() { x.Duration, x.Err = elapsed, err.Error() })
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if isProtobuf(resp.Header.Get("Content-Type")) {
			got, _ = decodeProtobuf(body) // a kind it does not know leaves got empty
		} else {
			_ = json.Unmarshal(body, &got) // a body that is not JSON leaves got empty
		}
	}
	elapsed := time.Since(x.Start)
	t.rec.answer(x, req, resp.StatusCode, body, func() {
		x.Duration = elapsed
		x.Code = resp.StatusCode
		if got.Kind == "Status" && resp.StatusCode >= 300 {
			x.Reason, x.Message = got.Reason, got.Message
		} else {
			x.GotRV, x.GotUID = got.Metadata.ResourceVersion, got.Metadata.UID
		}
		if x.Reason == "" {
			x.Reason = statusText(resp.StatusCode)
		}
	})
	return resp, nil
}

// response is the part of any API response body the recorder reads.
type response struct {
	Kind     string `json:"kind"`
	Reason   string `json:"reason"`
	Message  string `json:"message"`
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
		UID             string `json:"uid"`
	} `json:"metadata"`
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
