package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/hooks"
	"github.com/racekit/racekit/internal/roundtrip"
)

// feed is the path from the API server's watch streams to one cached
// controller's informers. It sits in the controller's transport, below the
// hooks and the recorder, and does two things no informer can be asked to:
//
//   - hold: while a resource is held, the events of its watch streams wait
//     in the feed, in order, instead of reaching the cache; release lets
//     them through. Between the two, the controller reads stale state on
//     purpose, at the moment the scenario chose.
//   - see: it keeps, per object, the last resourceVersion the cache has
//     taken in (reported by the informers' event handlers, which run after
//     the store is updated), so that the harness can wait, without polling,
//     until the cache has seen the scenario's writes.
//
// Each event is forwarded whole: the feed decodes the stream frame by frame
// and re-sends each frame as it came.
type feed struct {
	mu sync.Mutex
	// changed is closed, and replaced, whenever anything below changes:
	// a broadcast that waiters select on alongside their context.
	changed chan struct{}
	held    map[string]bool // by resource, such as "deployments"
	queued  map[string]int  // events waiting behind a hold, by resource
	seen    map[record.Key]record.Version
}

func newFeed() *feed {
	return &feed{changed: make(chan struct{}), held: map[string]bool{}, queued: map[string]int{},
		seen: map[record.Key]record.Version{}}
}

// broadcast wakes every waiter. Call it with f.mu held.
func (f *feed) broadcast() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// wait blocks until cond, called with f.mu held, is true, or ctx ends.
func (f *feed) wait(ctx context.Context, cond func() bool) error {
	for {
		f.mu.Lock()
		ok, ch := cond(), f.changed
		f.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// hold stops the events of resource's watch streams from reaching the
// cache.
func (f *feed) hold(resource string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held[resource] {
		return fmt.Errorf("%s is held already", resource)
	}
	f.held[resource] = true
	return nil
}

// errNotHeld reports a release without a hold.
var errNotHeld = errors.New("not held")

// release lets the events of resource's watch streams, and those queued
// behind the hold, through in order.
func (f *feed) release(resource string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.held[resource] {
		return errNotHeld
	}
	delete(f.held, resource)
	f.broadcast()
	return nil
}

// heldResources returns the resources held now, sorted.
func (f *feed) heldResources() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for r := range f.held {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// saw records what an informer's store now holds of key.
func (f *feed) saw(key record.Key, v record.Version) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen[key] = v
	f.broadcast()
}

// wrap is for rest.Config.Wrap: it gates the bodies of watch responses.
func (f *feed) wrap(next http.RoundTripper) http.RoundTripper {
	return roundtrip.Func(func(req *http.Request) (*http.Response, error) {
		req, call := hooks.Parsed("", req)
		resp, err := next.RoundTrip(req)
		if err != nil || call.Verb != "watch" {
			return resp, err
		}
		if resp.StatusCode == http.StatusOK {
			pr, pw := io.Pipe()
			ctx, cancel := context.WithCancel(req.Context())
			g := &gatedBody{PipeReader: pr, upstream: resp.Body, cancel: cancel}
			go f.pump(ctx, call.Resource, g.upstream, pw)
			resp.Body = g
		}
		return resp, nil
	})
}

// gatedBody is a watch response body as the informer reads it: what the
// pump lets through.
type gatedBody struct {
	*io.PipeReader
	upstream io.ReadCloser
	cancel   context.CancelFunc // ends the pump's wait behind a hold
}

func (g *gatedBody) Close() error {
	g.cancel()
	g.PipeReader.Close()
	return g.upstream.Close()
}

// pump copies the watch stream of resource from the API server to the
// informer one event at a time, each once resource is not held. It ends
// with the stream, or when ctx ends (the informer closed the stream).
func (f *feed) pump(ctx context.Context, resource string, upstream io.Reader, pw *io.PipeWriter) {
	dec := json.NewDecoder(upstream)
	for {
		var frame json.RawMessage
		if err := dec.Decode(&frame); err != nil {
			pw.CloseWithError(err) // io.EOF ends the stream as it ended
			return
		}
		f.mu.Lock()
		held := f.held[resource]
		if held {
			f.queued[resource]++
			f.broadcast()
		}
		f.mu.Unlock()
		if held {
			err := f.wait(ctx, func() bool { return !f.held[resource] })
			f.mu.Lock()
			f.queued[resource]--
			f.mu.Unlock()
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		if _, err := pw.Write(append(frame, '\n')); err != nil {
			return
		}
	}
}

// describe renders what the feed knows of keys, for a failure message.
func (f *feed) describe(keys []record.Key) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	for _, k := range keys {
		v, ok := f.seen[k]
		switch {
		case !ok:
			fmt.Fprintf(&b, "\n  %s/%s: not in the cache", k.Resource, k.Name)
		case v.Gone:
			fmt.Fprintf(&b, "\n  %s/%s: gone from the cache", k.Resource, k.Name)
		default:
			fmt.Fprintf(&b, "\n  %s/%s: the cache holds resourceVersion %s", k.Resource, k.Name, v.RV)
		}
	}
	return b.String()
}
