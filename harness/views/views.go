package views

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/hooks"
	"github.com/racekit/racekit/internal/roundtrip"
)

// What each actor is shown, at the wire: every actor's transport passes its
// watch streams through a gate (gate.go), below the recorder, and its lists
// and watch-lists past a rewriter, above it (Extension.Transport). A hold
// of an actor's resource holds each of its gates of that resource, open or
// opened while held; a hold at= also sends the actor's next list of the
// resource as of the past. The holds live in the scenario, not in a
// process, so a hold holds across the actor's lives: a restarted process
// meets the hold its predecessor left.

// views is what the views extension keeps of what the scenario's actors
// are shown.
type views struct {
	mu    sync.Mutex
	holds map[viewKey]*hold
	gates map[viewKey]map[*gate]bool
	// marks are the revisions mark named, by name (where the trace was
	// at each, for since=MARK, is the language's: Scenario.NoteMark).
	marks map[string]string
}

// viewKey is one actor's view of one resource (its plural name).
type viewKey struct{ actor, resource string }

func (k viewKey) String() string { return k.actor + " " + k.resource }

// hold is one hold of an actor's resource at the wire, from the line that
// took it until its release.
type hold struct {
	viewKey
	// pos and command are the line that took it, for messages.
	pos, command string
	// at names the past the actor's next list is served as of, and rv is
	// its resourceVersion; both "" without at=. listed is set once that
	// list has been sent (pending until then).
	at, rv string
	listed bool
	// met is set once a watch stream or the list met the hold: a hold that
	// nothing meets holds nothing, which the scenario is told.
	met bool
	// err is what went wrong when the actor met it; reported is set once a
	// command or the end of the script has said so.
	err      error
	reported bool
}

func newViews() *views {
	return &views{holds: map[viewKey]*hold{}, gates: map[viewKey]map[*gate]bool{}, marks: map[string]string{}}
}

// transport is the views extension's Extension.Transport: the rewriter
// of actor's lists (outer, above the recorder, so that the trace shows the
// request as sent), and the gate of its watches (inner, below it, so that
// the recorder notes an event as shown only once the gate lets it through).
func transport(sc *language.Scenario, actor string) (outer, inner func(http.RoundTripper) http.RoundTripper) {
	outer = func(next http.RoundTripper) http.RoundTripper {
		return roundtrip.Func(func(req *http.Request) (*http.Response, error) { return rewrite(sc, actor, req, next) })
	}
	inner = func(next http.RoundTripper) http.RoundTripper {
		return roundtrip.Func(func(req *http.Request) (*http.Response, error) { return gateWatch(sc, actor, req, next) })
	}
	return outer, inner
}

// anyPending reports whether a hold waits for a list to serve as of the
// past: the rewriter reads no request when none does.
func (v *views) anyPending() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, h := range v.holds {
		if h.rv != "" && !h.listed {
			return true
		}
	}
	return false
}

// pending returns the hold of key whose list as of the past has not been
// sent yet, or nil.
func (v *views) pending(key viewKey) *hold {
	v.mu.Lock()
	defer v.mu.Unlock()
	if h := v.holds[key]; h != nil && h.rv != "" && !h.listed {
		return h
	}
	return nil
}

// rewrite sends the actor's list of a resource held at= as of the hold's
// resourceVersion, exactly; and its watch-list (a watch with
// sendInitialEvents=true, which client-go's informers make first) as of it
// too, which kube-apiserver refuses with 422 Invalid, since a watch-list
// starts at the present: the informer then lists, as it does against a
// server without watch-lists, and that list is the one served as of the
// past. Any other call goes as it came.
func rewrite(sc *language.Scenario, actor string, req *http.Request, next http.RoundTripper) (*http.Response, error) {
	v := viewsOf(sc)
	if !v.anyPending() {
		return next.RoundTrip(req)
	}
	req, call := hooks.Parsed(actor, req)
	if call.Verb != "list" && call.Verb != "watch" {
		return next.RoundTrip(req)
	}
	h := v.pending(viewKey{actor, call.Resource})
	q := req.URL.Query()
	switch {
	case h == nil:
		return next.RoundTrip(req)
	case call.Verb == "watch" && q.Get("sendInitialEvents") == "true":
		sc.Recorder().NoteView(record.ViewChange{Change: record.ViewWatchList, Actor: actor, Resource: call.Resource, At: h.at})
		return next.RoundTrip(asOf(req, h.rv))
	case call.Verb == "list" && q.Get("continue") == "":
		v.mu.Lock()
		h.listed = true
		v.mu.Unlock()
		sc.Recorder().NoteView(record.ViewChange{Change: record.ViewList, Actor: actor, Resource: call.Resource, At: h.at})
		resp, err := next.RoundTrip(asOf(req, h.rv))
		v.listedAsOf(sc, h, resp, err)
		return resp, err
	}
	return next.RoundTrip(req)
}

// asOf returns req asking for resourceVersion rv exactly.
func asOf(req *http.Request, rv string) *http.Request {
	out := req.Clone(req.Context())
	query := out.URL.Query()
	query.Set("resourceVersion", rv)
	query.Set("resourceVersionMatch", "Exact")
	out.URL.RawQuery = query.Encode()
	return out
}

// listedAsOf takes in the answer to h's list as of the past: the hold is
// met, or failed with what the API server said (a 410 Expired: etcd has
// compacted that revision).
func (v *views) listedAsOf(sc *language.Scenario, h *hold, resp *http.Response, err error) {
	var why error
	switch {
	case err != nil:
		why = fmt.Errorf("%s's list of %s as of %s failed: %w", h.actor, h.resource, h.at, err)
	case resp.StatusCode != http.StatusOK:
		body, _ := io.ReadAll(resp.Body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		said := ""
		if reason, msg, ok := record.StatusOf(resp.Header.Get("Content-Type"), body); ok {
			said = fmt.Sprintf(" (%s: %s)", reason, msg)
		}
		why = fmt.Errorf("the API server answered %s's list of %s as of %s (resourceVersion %s, exactly) with %d %s%s%s",
			h.actor, h.resource, h.at, h.rv, resp.StatusCode, http.StatusText(resp.StatusCode), said, gone(resp.StatusCode))
	}
	v.mu.Lock()
	h.met = true
	if why != nil && h.err == nil {
		h.err = why
	}
	v.mu.Unlock()
	sc.Recorder().Poke() // an await of the actor fails at once
}

// gone explains a 410 to a list as of the past.
func gone(code int) string {
	if code != http.StatusGone {
		return ""
	}
	return ": etcd no longer has that revision, since a compaction (compact) removed it, and the past cannot be shown"
}

// gateWatch passes a watch stream of the actor through a gate, which holds
// it while the actor's resource is held. A stream in a media type racekit
// cannot frame passes as it is; a hold of it fails.
//
// The gate reads events, not the bytes of an encoding: a request that came
// through the racing proxy carries its client's Accept-Encoding, and
// kube-apiserver gzips a watch-list's stream (WatchListCompression), which
// the actor's transport would then pass on compressed. Without the header,
// the transport asks for gzip itself and hands on the stream decoded, and
// the client, which asked for gzip but takes identity too, gets it so.
func gateWatch(sc *language.Scenario, actor string, req *http.Request, next http.RoundTripper) (*http.Response, error) {
	req, call := hooks.Parsed(actor, req)
	if call.Verb == "watch" && req.Header.Get("Accept-Encoding") != "" {
		req = req.Clone(req.Context())
		req.Header.Del("Accept-Encoding")
	}
	resp, err := next.RoundTrip(req)
	if err != nil || call.Verb != "watch" || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	key := viewKey{actor, call.Resource}
	v := viewsOf(sc)
	contentType := resp.Header.Get("Content-Type")
	frames, ok := record.NewFrameReader(resp.Body, contentType)
	if !ok {
		v.unframed(sc, key, contentType)
		return resp, nil
	}
	g := newGate(req.Context(), frames, resp.Body, contentType, req.URL.Query().Get("sendInitialEvents") == "true")
	g.onError = func(f record.WatchFrame) { v.upstreamError(sc, key, f) }
	g.onBroken = func(err error) { v.broken(sc, key, contentType, err) }
	g.onEnd = func() { v.closed(key, g) }
	v.open(key, g)
	g.start()
	resp.Body = g.body()
	return resp, nil
}

// open adds g to key's gates, held if key is.
func (v *views) open(key viewKey, g *gate) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.gates[key] == nil {
		v.gates[key] = map[*gate]bool{}
	}
	v.gates[key][g] = true
	if h := v.holds[key]; h != nil {
		h.met = true
		g.hold()
	}
}

// closed forgets g, once it is done.
func (v *views) closed(key viewKey, g *gate) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.gates[key], g)
}

// unframed fails key's hold, if any, on a stream it cannot hold.
func (v *views) unframed(sc *language.Scenario, key viewKey, contentType string) {
	v.fail(sc, key, fmt.Errorf("%s watches %s in %q, which racekit cannot hold: it frames JSON and protobuf watch events", key.actor, key.resource, contentType))
}

// broken fails key's hold, if any, on a stream that was not what its
// media type said: the gate ended it, and the actor watches again.
func (v *views) broken(sc *language.Scenario, key viewKey, contentType string, err error) {
	v.fail(sc, key, fmt.Errorf("racekit could not read %s's watch of %s as %s, and ended it: %w", key.actor, key.resource, contentType, err))
}

// fail fails key's hold, if any and if it has not failed already, with
// why.
func (v *views) fail(sc *language.Scenario, key viewKey, why error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if h := v.holds[key]; h != nil && h.err == nil {
		h.met = true
		h.err = why
		sc.Recorder().Poke()
	}
}

// upstreamError fails a hold at= whose watch from the past the API server
// ended with an ERROR event: its watch cache no longer has the events
// since that revision, and the actor would relist to the present.
func (v *views) upstreamError(sc *language.Scenario, key viewKey, f record.WatchFrame) {
	v.mu.Lock()
	h := v.holds[key]
	atPast := h != nil && h.listed
	v.mu.Unlock()
	if atPast {
		v.fail(sc, key, fmt.Errorf("the API server ended %s's watch of %s from %s with an ERROR event: it no longer has the events since that revision, so the actor lists the present again", key.actor, key.resource, h.at))
	}
}

// heldKeys describes what is held now, for messages.
func (v *views) heldKeys() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []string
	for k, h := range v.holds {
		out = append(out, fmt.Sprintf("%s (since %s)", k, shortPos(h.pos)))
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "nothing is held"
	}
	return "held are " + strings.Join(out, ", ")
}
