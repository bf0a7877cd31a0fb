package record

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/racekit/racekit/hooks"
)

// Recorder keeps every exchange of one scenario, in the order the requests
// were sent, with the hook firings in between. It is safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	entries []Entry
	seq     int
	// objects holds what the trace says of each object (lastknown.go).
	objects map[Key]*latest
	// writes holds what each object's last successful write left
	// (written.go).
	writes map[Key]Version
	// sweeps counts the writes to each collection in flight
	// (collection.go).
	sweeps map[collection]int
	// changed is closed, and forgotten, at the next change: what await
	// and idle wait on (package running's await.go and idle.go), instead
	// of polling the trace.
	changed chan struct{}
	// namespace is the scenario's (SetNamespace): an exchange in another
	// is Foreign.
	namespace string
}

// Changes returns a channel that is closed at the recorder's next change:
// an exchange sent or answered, a hook firing, or a poke. Take it before
// looking at the trace, so that a change in between is not missed.
func (r *Recorder) Changes() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return r.changed
}

// Poke wakes whoever waits on changes, for news that is not an exchange,
// such as a running controller that returned.
func (r *Recorder) Poke() {
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
	return r.WrapService(actor, "")
}

// WrapService is Wrap for the calls to service, outside the API server.
func (r *Recorder) WrapService(actor, service string) func(http.RoundTripper) http.RoundTripper {
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
	return copyEntries(r.entries)
}

// Since returns a copy of what has been recorded after the first n
// entries, and how many entries there are now: for a wait that looks
// again and again at what came after a point (idle), without copying the
// whole trace each time. It returns nil when there are fewer than n.
func (r *Recorder) Since(n int) (Trace, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n > len(r.entries) {
		return nil, len(r.entries)
	}
	return copyEntries(r.entries[n:]), len(r.entries)
}

// copyEntries copies es, each exchange with it: the recorder goes on
// filling in the ones it holds.
func copyEntries(es []Entry) Trace {
	out := make(Trace, len(es))
	for i, e := range es {
		if e.Exchange != nil {
			x := *e.Exchange
			x.Shown = slices.Clip(x.Shown) // events still come in
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
	x.Foreign = r.foreign(x)
	r.entries = append(r.entries, Entry{Exchange: x})
	if key, ok := objectKeyOf(req, x); ok {
		r.sent(key, x)
	}
	if c, ok := collectionOf(req, x); ok {
		r.sweepStarts(c)
	}
	r.pokeLocked()
}

// answer completes x, which add recorded: f fills in the answer under the
// recorder's lock, since Trace may copy x meanwhile. code, body and a are
// the answer's status, body and what the recorder read of it (0, nil and
// nil when there was none, or it was not read); they tell what the object
// now holds.
func (r *Recorder) answer(x *Exchange, req *http.Request, code int, body []byte, a *answer, f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f()
	if key, ok := objectKeyOf(req, x); ok {
		r.answeredAbout(key, x, req, code, body)
		r.noteWritten(key, x, code, a)
	}
	if c, ok := collectionOf(req, x); ok {
		r.sweepEnds(c, x, code, a)
	}
	r.pokeLocked()
}

// shown adds to x what one of its watch events showed its actor, as the
// actor read it.
// A wait on what the actor has seen (idle) wakes then.
func (r *Recorder) shown(x *Exchange, s Shown) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.After = r.seq
	x.Shown = append(x.Shown, s)
	r.pokeLocked()
}

// watchState changes what the recorder knows of a watch's stream (f sets
// WatchEnded or WatchBlind), under its lock, and wakes the waits.
func (r *Recorder) watchState(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f()
	r.pokeLocked()
}

type recordingTransport struct {
	actor   string
	service string // "" for the API server
	rec     *Recorder
	next    http.RoundTripper
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	parse := hooks.Parsed
	if t.service != "" {
		parse = hooks.ParsedService
	}
	req, call := parse(t.actor, req)
	x := &Exchange{Call: call, Service: t.service}
	query := req.URL.Query()
	if q := query.Get("resourceVersion"); q != "" {
		x.SentRV = q
	}
	if call.Verb == "list" || call.Verb == "watch" {
		fs := query.Get("fieldSelector")
		x.Selective = query.Get("labelSelector") != "" || fs != "" && fs != "metadata.name="+call.Name
		x.InitialEvents = call.Verb == "watch" && query.Get("sendInitialEvents") == "true"
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
		t.rec.answer(x, req, 0, nil, nil, func() { x.Duration, x.Err = elapsed, err.Error() })
		return nil, err
	}
	contentType := resp.Header.Get("Content-Type")
	if x.Verb == "watch" && resp.StatusCode == http.StatusOK {
		// The stream is the actor's to read; its events are noted as
		// the actor reads them.
		elapsed := time.Since(x.Start)
		t.rec.answer(x, req, resp.StatusCode, nil, nil, func() {
			x.Duration, x.Code, x.Reason = elapsed, resp.StatusCode, statusText(resp.StatusCode)
		})
		resp.Body = newWatchTee(resp.Body, contentType, func(s Shown) { t.rec.shown(x, s) },
			func() { t.rec.watchState(func() { x.WatchEnded = true }) },
			func() { t.rec.watchState(func() { x.WatchBlind = true }) })
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		elapsed := time.Since(x.Start)
		t.rec.answer(x, req, 0, nil, nil, func() { x.Duration, x.Err = elapsed, err.Error() })
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	a, decoded := decodeAnswer(contentType, body)
	elapsed := time.Since(x.Start)
	t.rec.answer(x, req, resp.StatusCode, body, &a, func() {
		x.Duration = elapsed
		x.fill(resp.StatusCode, a, decoded, contentType, len(body))
	})
	return resp, nil
}

// fill records the answer to x: its status code, and a, what the recorder
// read of its body (decoded false when it could not), of size n, sent as
// contentType.
// LastSeq returns the sequence number of the last exchange recorded, 0
// before the first: where a span of the trace starts or ends, read without
// copying the trace.
func (r *Recorder) LastSeq() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// Scan calls f with each exchange recorded so far, in order, under the
// recorder's lock and without copying the trace: for a wait that looks at
// every change (await, idle). f must not change x, nor call the recorder.
func (r *Recorder) Scan(f func(x *Exchange)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.entries {
		if e.Exchange != nil {
			f(e.Exchange)
		}
	}
}
