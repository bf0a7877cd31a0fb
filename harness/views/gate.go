package views

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/racekit/racekit/harness/record"
)

// A gate is one watch stream of one actor on its way from the API server
// to the actor, below the recorder: it passes each event on whole, as it
// came, and, while the stream is held, keeps the events back, in order,
// until a release lets them through or a relist ends the stream with 410
// Expired instead. Two goroutines carry it: one reads the API server's
// events into a queue, the other writes the queue to the actor. Neither
// polls: the reader blocks on the network, and the writer, while the
// stream is held, on a channel that only a release, a relist or the
// stream's end signals (wakeups counts its wake-ups, for the tests that say
// so).
type gate struct {
	frames   *record.FrameReader
	upstream io.ReadCloser
	pr       *io.PipeReader
	pw       *io.PipeWriter
	// contentType is the stream's media type, for the 410 of a relist.
	contentType string
	ctx         context.Context
	cancel      context.CancelFunc
	// onError is told of an ERROR event the API server sent, held or not;
	// onBroken of a stream that is not what its media type says, which
	// the gate ends; onEnd, once, when the gate is done.
	onError  func(record.WatchFrame)
	onBroken func(error)
	onEnd    func()
	// onRead is told, for the tests, of each event the reader queued.
	onRead func()

	mu sync.Mutex
	// queue is what the reader has read and the writer not yet written.
	queue []queued
	// initial is set while a watch-list's initial events come: they are
	// the state the watch starts from, a list in all but name, and pass a
	// hold, which keeps back what changes after.
	initial bool
	held    bool
	// latest is the highest resourceVersion of the events the reader has
	// read, and reads is signalled after each: a catch-up waits until the
	// stream has brought every write it steps to.
	latest uint64
	reads  chan struct{}
	// steps are the events a step lets through while the stream is held,
	// one each, oldest first: each is closed once the actor has read its
	// event, or the gate has ended.
	steps []chan struct{}
	// relist, once set, is the message of the 410 that ends the stream.
	relist string
	// ended is the upstream's end, once the reader met it.
	ended error
	// wake is signalled when the writer may have something to do.
	wake    chan struct{}
	wakeups atomic.Int64
}

// queued is one event in a gate's queue.
type queued struct {
	frame   record.WatchFrame
	initial bool
}

// newGate returns a gate over a watch stream whose events frames reads
// from upstream; initial says the stream starts with a watch-list's
// initial events. Start it with start, and give the actor body().
func newGate(ctx context.Context, frames *record.FrameReader, upstream io.ReadCloser, contentType string, initial bool) *gate {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	return &gate{frames: frames, upstream: upstream, pr: pr, pw: pw, contentType: contentType, ctx: ctx, cancel: cancel,
		initial: initial, wake: make(chan struct{}, 1), reads: make(chan struct{}, 1), onError: func(record.WatchFrame) {}, onBroken: func(error) {}, onEnd: func() {}, onRead: func() {}}
}

// start sets the gate's goroutines going.
func (g *gate) start() {
	go g.read()
	go g.write()
}

// body is the stream as the actor reads it.
func (g *gate) body() io.ReadCloser { return gatedBody{g} }

type gatedBody struct{ g *gate }

func (b gatedBody) Read(p []byte) (int, error) { return b.g.pr.Read(p) }

// Close is the actor closing the stream: the gate stops, and the API
// server's stream is closed.
func (b gatedBody) Close() error {
	b.g.cancel()
	b.g.pr.Close()
	return b.g.upstream.Close()
}

// signal wakes the writer, if it waits. Call it with g.mu held.
func (g *gate) signal() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// hold keeps the events that the actor has not read yet back, and those
// that follow, until release or relist.
func (g *gate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held = true
}

// release lets what the gate kept back through, in order, and what
// follows.
func (g *gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held = false
	g.signal()
}

// step lets the oldest event the gate keeps back through, and keeps the
// rest held: it returns a channel closed once the actor has read that
// event (or the gate ended), and false when nothing is kept back that a
// step has not let through already, or when that event's resourceVersion
// is past upTo (0: no bound).
//
// before runs, when the event is to be shown, before the reader may read
// it: what the trace says of the step must come before what the reader
// does on it.
func (g *gate) step(upTo uint64, before func()) (<-chan struct{}, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.held || g.relist != "" || len(g.queue) <= len(g.steps) {
		return nil, false
	}
	if rv, err := strconv.ParseUint(g.queue[len(g.steps)].frame.RV, 10, 64); upTo > 0 && err == nil && rv > upTo {
		return nil, false
	}
	before()
	done := make(chan struct{})
	g.steps = append(g.steps, done)
	g.signal()
	return done, true
}

// reached waits until the reader has read an event of resourceVersion
// rv or later, the stream has ended, or ctx ends.
func (g *gate) reached(ctx context.Context, rv uint64) error {
	for {
		g.mu.Lock()
		latest, ended := g.latest, g.ended
		g.mu.Unlock()
		if latest >= rv || ended != nil {
			return nil
		}
		select {
		case <-g.reads:
		case <-ctx.Done():
			return fmt.Errorf("its watch brought events up to resourceVersion %d, not %d: %w", latest, rv, ctx.Err())
		}
	}
}

// expire drops what the gate kept back and ends the stream with an ERROR
// event 410 Expired carrying message, as kube-apiserver ends a watch whose
// resourceVersion is compacted.
func (g *gate) expire(message string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.relist = message
	g.signal()
}

// read reads the API server's events into the queue until the stream
// ends.
func (g *gate) read() {
	for {
		f, err := g.frames.Next()
		g.mu.Lock()
		if err != nil {
			g.ended = err
			g.signal()
			g.mu.Unlock()
			if errors.Is(err, record.ErrFrame) {
				g.onBroken(err)
			}
			return
		}
		initial := g.initial
		if f.InitialEventsEnd {
			g.initial = false
		}
		g.queue = append(g.queue, queued{frame: f, initial: initial})
		if rv, err := strconv.ParseUint(f.RV, 10, 64); err == nil && rv > g.latest {
			g.latest = rv
		}
		select {
		case g.reads <- struct{}{}:
		default:
		}
		if !g.held || initial {
			g.signal()
		}
		g.mu.Unlock()
		if f.Type == "ERROR" {
			g.onError(f)
		}
		g.onRead()
	}
}

// write writes the queue to the actor, each event once the stream is not
// held (a watch-list's initial events at once), until the stream ends,
// the actor closes it, or a relist ends it.
func (g *gate) write() {
	defer g.onEnd()
	defer g.upstream.Close()
	defer g.endSteps()
	for {
		frame, stepped, last, err := g.next()
		if frame != nil {
			// A pipe's Write returns once the actor has read it all.
			_, werr := g.pw.Write(frame)
			if stepped != nil {
				close(stepped)
			}
			if werr != nil {
				return // the actor closed the stream
			}
		}
		switch {
		case last:
			g.pw.CloseWithError(err)
			return
		case frame != nil:
			continue
		}
		select {
		case <-g.wake:
		case <-g.ctx.Done():
			g.pw.CloseWithError(g.ctx.Err())
			return
		}
		g.wakeups.Add(1) // whatever woke it
	}
}

// endSteps closes the channels of the steps whose events the actor will
// not read now: the gate has ended.
func (g *gate) endSteps() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.steps {
		close(c)
	}
	g.steps = nil
}

// next returns what the writer writes next, if anything (frame nil: wait
// for a signal), the channel of the step that let it through while held
// (to close once the actor has read it), and whether the stream ends after
// it (last), with the error to end it with: the 410 of a relist, which
// drops the queue; the next event, if the stream is not held, the event is
// one of a watch-list's initial events, or a step let it through; the
// stream's own end once the queue is empty.
func (g *gate) next() (frame []byte, stepped chan struct{}, last bool, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	// What a signal announced, the state below shows now: the writer
	// wakes again only for a change that comes after.
	select {
	case <-g.wake:
	default:
	}
	switch {
	case g.relist != "":
		g.queue = nil
		frame, err := record.ExpiredFrame(g.contentType, g.relist)
		return frame, nil, true, err
	case len(g.queue) > 0 && (!g.held || g.queue[0].initial || len(g.steps) > 0):
		q := g.queue[0]
		g.queue = g.queue[1:]
		if !q.initial && len(g.steps) > 0 {
			stepped, g.steps = g.steps[0], g.steps[1:]
		}
		return q.frame.Bytes, stepped, false, nil
	case len(g.queue) == 0 && g.ended != nil:
		if errors.Is(g.ended, io.EOF) {
			return nil, nil, true, nil
		}
		return nil, nil, true, g.ended
	}
	return nil, nil, false, nil
}
