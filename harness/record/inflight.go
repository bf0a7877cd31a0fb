package record

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/racekit/racekit/hooks"
	"github.com/racekit/racekit/internal/roundtrip"
)

// InFlight knows, for each actor, the calls that have entered its
// transport chain and are not done: from before the hooks, where a
// before-hook's action may hold a call for as long as it runs, until the
// call's answer has been read and its after-hooks have run. The recorder
// sits inside the hooks and sees a call only once they let it go, so idle
// asks here whether an actor is busy. Its zero value is ready for use.
type InFlight struct {
	mu    sync.Mutex
	next  int
	calls map[int]Flight
	// last is when each actor's last call entered the chain or was done.
	last map[string]time.Time
	// changed is closed, and forgotten, at the next call that enters or
	// is done: what idle waits on besides the recorder.
	changed chan struct{}
}

// Flight is one call in flight.
type Flight struct {
	call  hooks.Call
	since time.Time
}

// Call returns the call in flight.
func (fl Flight) Call() hooks.Call { return fl.call }

// Wrap is for rest.Config.Wrap, outside the hooks: it counts actor's calls
// in flight. A watch counts until its response's headers are in, as the
// recorder's does: an open watch is no call in flight.
func (f *InFlight) Wrap(actor string) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundtrip.Func(func(req *http.Request) (*http.Response, error) {
			req, call := hooks.Parsed(actor, req)
			done := f.enter(call)
			defer done()
			return next.RoundTrip(req)
		})
	}
}

// enter notes call as in flight, and returns the function that notes it
// done.
func (f *InFlight) enter(call hooks.Call) func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls, f.last = map[int]Flight{}, map[string]time.Time{}
	}
	f.next++
	id, now := f.next, time.Now()
	f.calls[id] = Flight{call: call, since: now}
	f.last[call.Actor] = now
	f.wakeLocked()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.calls, id)
		f.last[call.Actor] = time.Now()
		f.wakeLocked()
	}
}

func (f *InFlight) wakeLocked() {
	if f.changed != nil {
		close(f.changed)
		f.changed = nil
	}
}

// Changes returns a channel that is closed when a call next enters or is
// done. Take it before asking of, so that a change in between is not
// missed.
func (f *InFlight) Changes() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.changed == nil {
		f.changed = make(chan struct{})
	}
	return f.changed
}

// Of returns actor's calls in flight, oldest first, and when its last call
// entered or was done (zero if it has made none).
func (f *InFlight) Of(actor string) ([]Flight, time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Flight
	for _, fl := range f.calls {
		if fl.call.Actor == actor {
			out = append(out, fl)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].since.Before(out[j].since) })
	return out, f.last[actor]
}

// DescribeFlights renders calls in flight for a message.
func DescribeFlights(fs []Flight) string {
	var parts []string
	for _, fl := range fs {
		parts = append(parts, fmt.Sprintf("%s %s (for %v)", fl.call.Verb, fl.call.Object(), time.Since(fl.since).Round(time.Millisecond)))
	}
	return strings.Join(parts, ", ")
}

// Any reports whether any actor has a call in flight.
func (f *InFlight) Any() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls) > 0
}
