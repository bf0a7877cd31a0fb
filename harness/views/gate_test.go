package views

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	restclientwatch "k8s.io/client-go/rest/watch"

	"github.com/racekit/racekit/harness/record"
)

// The gate's tests feed it a stream as the API server encodes one, with
// apimachinery's own framers and serializers, and read what it passes on
// as client-go's REST client does, with apimachinery's own decoders.

var watchTypes = []string{"application/json", "application/vnd.kubernetes.protobuf"}

// event returns the frame of one watch event of a ConfigMap at rv, as
// the API server sends it in mediaType; a BOOKMARK with end set ends a
// watch-list's initial events.
func event(t testing.TB, mediaType string, typ watch.EventType, rv string, end bool) []byte {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(kscheme.Codecs.SupportedMediaTypes(), mediaType)
	assert.Assert(t, ok, mediaType)
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", ResourceVersion: rv}}
	if end {
		cm.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	var obj, out bytes.Buffer
	assert.NilError(t, info.Serializer.Encode(cm, &obj))
	enc := streaming.NewEncoder(info.StreamSerializer.Framer.NewFrameWriter(&out), info.StreamSerializer.Serializer)
	assert.NilError(t, enc.Encode(&metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: obj.Bytes()}}))
	return out.Bytes()
}

// rig is a gate between a pipe the test writes the API server's events to
// and a client-go decoder that reads what the gate lets through.
type rig struct {
	t        *testing.T
	g        *gate
	server   *io.PipeWriter
	upstream *closeCount
	// read is told of each event the gate's reader queued; got receives
	// each event the client decoded, and end the error that ended the
	// stream for the client.
	read chan struct{}
	got  chan watch.Event
	end  chan error
	// ended is closed when the gate is done.
	ended chan struct{}
}

// closeCount is a stream that counts its closes.
type closeCount struct {
	io.Reader
	closes chan struct{}
	close  func() error
}

func (c *closeCount) Close() error {
	select {
	case c.closes <- struct{}{}:
	default:
	}
	return c.close()
}

func newRig(t *testing.T, mediaType string, initial bool) *rig {
	pr, pw := io.Pipe()
	up := &closeCount{Reader: pr, closes: make(chan struct{}, 1), close: pr.Close}
	frames, ok := record.NewFrameReader(up, mediaType)
	assert.Assert(t, ok)
	r := &rig{t: t, server: pw, upstream: up, read: make(chan struct{}, 64), got: make(chan watch.Event, 64), end: make(chan error, 1),
		ended: make(chan struct{})}
	r.g = newGate(context.Background(), frames, up, mediaType, initial)
	r.g.onRead = func() { r.read <- struct{}{} }
	r.g.onEnd = func() { close(r.ended) }
	r.g.start()
	info, _ := runtime.SerializerInfoForMediaType(kscheme.Codecs.SupportedMediaTypes(), mediaType)
	body := r.g.body()
	dec := restclientwatch.NewDecoder(streaming.NewDecoder(info.StreamSerializer.Framer.NewFrameReader(body), info.StreamSerializer.Serializer), info.Serializer)
	go func() {
		for {
			typ, obj, err := dec.Decode()
			if err != nil {
				r.end <- err
				return
			}
			r.got <- watch.Event{Type: typ, Object: obj}
		}
	}()
	t.Cleanup(func() { body.Close(); pw.Close() })
	return r
}

// send has the API server send frames, and waits until the gate's reader
// has queued each.
func (r *rig) send(frames ...[]byte) {
	r.t.Helper()
	for _, f := range frames {
		_, err := r.server.Write(f)
		assert.NilError(r.t, err)
		<-r.read
	}
}

// next returns the next event the client decoded. The bound only turns
// a gate that never lets the event through into a failure. The decoder
// queues each event before it reads on, so an end that is ready comes
// after every event queued by then: when both are, the event is next,
// and the end is kept for the test's own read of it (a select picks
// among ready cases at random; under load with -race it picked the end
// of TestGateRelist's stream before its 410).
func (r *rig) next() watch.Event {
	r.t.Helper()
	select {
	case e := <-r.got:
		return e
	case err := <-r.end:
		select {
		case e := <-r.got:
			r.end <- err
			return e
		default:
		}
		r.t.Fatalf("the stream ended, want another event: %v", err)
	case <-time.After(10 * time.Second):
		r.t.Fatal("no event reached the client in 10 s")
	}
	return watch.Event{}
}

// rvOf returns the resourceVersion of an event's object.
func rvOf(t *testing.T, e watch.Event) string {
	t.Helper()
	m, err := metav1Accessor(e.Object)
	assert.NilError(t, err)
	return m.GetResourceVersion()
}

func metav1Accessor(obj runtime.Object) (metav1.Object, error) {
	if m, ok := obj.(metav1.Object); ok {
		return m, nil
	}
	return nil, errors.New("no metadata")
}

// queued returns how many events the gate keeps back now.
func (r *rig) queued() int {
	r.g.mu.Lock()
	defer r.g.mu.Unlock()
	return len(r.g.queue)
}

// TestGateNext checks what the writer does next in each state of a gate,
// whatever woke it: a held event waits however often the writer wakes,
// but for a watch-list's initial events; a relist drops the queue and ends
// the stream with a 410; the stream's end comes after what was queued.
func TestGateNext(t *testing.T) {
	a := event(t, "application/json", watch.Modified, "2", false)
	b := event(t, "application/json", watch.Modified, "3", false)
	q := func(initial bool, frames ...[]byte) []queued {
		var out []queued
		for _, f := range frames {
			out = append(out, queued{frame: record.WatchFrame{Bytes: f}, initial: initial})
		}
		return out
	}
	step := func() []chan struct{} { return []chan struct{}{make(chan struct{})} }
	for _, tc := range []struct {
		name    string
		g       *gate
		want    []byte
		stepped bool
		last    bool
		expired bool
	}{
		{name: "nothing", g: &gate{}},
		{name: "an event", g: &gate{queue: q(false, a, b)}, want: a},
		{name: "held", g: &gate{queue: q(false, a, b), held: true}},
		{name: "held, an initial event", g: &gate{queue: q(true, a), held: true}, want: a},
		{name: "held, a step", g: &gate{queue: q(false, a, b), held: true, steps: step()}, want: a, stepped: true},
		{name: "held, an initial event, a step waits for the next", g: &gate{queue: q(true, a), held: true, steps: step()}, want: a},
		{name: "released with a step not taken yet", g: &gate{queue: q(false, a, b), steps: step()}, want: a, stepped: true},
		{name: "relist, a step", g: &gate{queue: q(false, a, b), held: true, steps: step(), relist: "too old", contentType: "application/json"}, last: true, expired: true},
		{name: "ended, an event left", g: &gate{queue: q(false, a), ended: io.EOF}, want: a},
		{name: "ended, held, an event left", g: &gate{queue: q(false, a), ended: io.EOF, held: true}},
		{name: "ended", g: &gate{ended: io.EOF}, last: true},
		{name: "relist", g: &gate{queue: q(false, a, b), held: true, relist: "too old", contentType: "application/json"}, last: true, expired: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.g.wake = make(chan struct{}, 1)
			tc.g.wake <- struct{}{} // woken, whatever for
			frame, stepped, last, err := tc.g.next()
			assert.NilError(t, err)
			assert.Equal(t, last, tc.last)
			assert.Equal(t, stepped != nil, tc.stepped, "the step that let the event through")
			if tc.expired {
				assert.Assert(t, bytes.Contains(frame, []byte(`"reason":"Expired"`)), "%s", frame)
				assert.Equal(t, len(tc.g.queue), 0, "a relist drops what was held")
				return
			}
			assert.DeepEqual(t, frame, tc.want)
		})
	}
}

// TestGateSteps checks a step through a hold: each lets the oldest event
// kept back through, and its channel closes once the client has read it;
// the rest stay held; a step with nothing kept back is refused; a release
// lets the rest through, and a step taken before it still closes. A step
// taken runs its before function once, before the client can read the
// event (what the trace notes of a step precedes the reader's reaction);
// a step refused does not run it.
func TestGateSteps(t *testing.T) {
	for _, mt := range watchTypes {
		t.Run(mt, func(t *testing.T) {
			r := newRig(t, mt, false)
			befores := 0
			before := func() {
				befores++
				assert.Equal(t, len(r.got), 0, "the client read the event before the step's before function ran")
			}
			_, ok := r.g.step(0, before)
			assert.Assert(t, !ok, "a step through a gate that is not held")
			r.g.hold()
			_, ok = r.g.step(0, before)
			assert.Assert(t, !ok, "a step with nothing kept back")
			r.send(event(t, mt, watch.Modified, "2", false), event(t, mt, watch.Modified, "3", false), event(t, mt, watch.Deleted, "4", false))
			for _, rv := range []string{"2", "3"} {
				done, ok := r.g.step(0, before)
				assert.Assert(t, ok)
				assert.Equal(t, rvOf(t, r.next()), rv)
				<-done // closed once the client read it; a hang is the failure
				assert.Equal(t, len(r.got), 0, "a step let more than one event through")
			}
			assert.Equal(t, r.queued(), 1, "the last event must stay held")
			done, ok := r.g.step(0, before)
			assert.Assert(t, ok)
			_, ok = r.g.step(0, before)
			assert.Assert(t, !ok, "a second step for the one event left")
			assert.Equal(t, befores, 3, "before runs once for each step taken, and for none refused")
			r.g.release()
			assert.Equal(t, rvOf(t, r.next()), "4")
			<-done
			r.send(event(t, mt, watch.Added, "5", false))
			assert.Equal(t, rvOf(t, r.next()), "5")
		})
	}
}

// TestGateHoldsInOrder checks a hold and its release: events pass as they
// come; held, they wait in the gate, none reaching the client, and the
// writer that would pass them sleeps; released, they reach the client in
// the order the API server sent them, and later events pass again.
func TestGateHoldsInOrder(t *testing.T) {
	for _, mt := range watchTypes {
		t.Run(mt, func(t *testing.T) {
			r := newRig(t, mt, false)
			r.send(event(t, mt, watch.Added, "1", false))
			assert.Equal(t, rvOf(t, r.next()), "1")

			r.g.hold()
			before := r.g.wakeups.Load()
			r.send(event(t, mt, watch.Modified, "2", false), event(t, mt, watch.Modified, "3", false), event(t, mt, watch.Deleted, "4", false))
			assert.Equal(t, r.queued(), 3, "the gate must keep the three events back")
			assert.Equal(t, r.g.wakeups.Load(), before, "a held gate's writer must sleep while events arrive")
			assert.Equal(t, len(r.got), 0, "a held event reached the client")

			r.g.release()
			for _, want := range []struct {
				typ watch.EventType
				rv  string
			}{{watch.Modified, "2"}, {watch.Modified, "3"}, {watch.Deleted, "4"}} {
				e := r.next()
				assert.Equal(t, e.Type, want.typ)
				assert.Equal(t, rvOf(t, e), want.rv)
			}
			r.send(event(t, mt, watch.Added, "5", false))
			assert.Equal(t, rvOf(t, r.next()), "5")
		})
	}
}

// TestGateRelist checks release ... relist: what the gate held is dropped,
// the client reads one ERROR event that client-go takes for the API
// server's 410 Expired, then the end of the stream, and the API server's
// stream is closed.
func TestGateRelist(t *testing.T) {
	for _, mt := range watchTypes {
		t.Run(mt, func(t *testing.T) {
			r := newRig(t, mt, false)
			r.g.hold()
			r.send(event(t, mt, watch.Modified, "2", false), event(t, mt, watch.Modified, "3", false))
			r.g.expire("too old (racekit: relist)")
			e := r.next()
			assert.Equal(t, e.Type, watch.Error)
			err := apierrors.FromObject(e.Object)
			assert.Assert(t, apierrors.IsResourceExpired(err), "%v", err)
			assert.ErrorContains(t, err, "racekit: relist")
			end := <-r.end
			assert.Assert(t, errors.Is(end, io.EOF), "the stream must end after the 410, with io.EOF: %v", end)
			<-r.upstream.closes
			assert.Equal(t, len(r.got), 0, "a dropped event reached the client")
		})
	}
}

// TestGateInitialEventsPass checks that a held watch-list still delivers
// its initial events (the state the watch starts from, which an informer
// waits for before it syncs) up to and with the BOOKMARK that ends them,
// and keeps back what follows.
func TestGateInitialEventsPass(t *testing.T) {
	for _, mt := range watchTypes {
		t.Run(mt, func(t *testing.T) {
			r := newRig(t, mt, true)
			r.g.hold()
			r.send(event(t, mt, watch.Added, "1", false), event(t, mt, watch.Bookmark, "2", true), event(t, mt, watch.Modified, "3", false))
			assert.Equal(t, r.next().Type, watch.Added)
			assert.Equal(t, r.next().Type, watch.Bookmark)
			assert.Equal(t, r.queued(), 1)
			r.g.release()
			assert.Equal(t, rvOf(t, r.next()), "3")
		})
	}
}

// TestGateClientCloses checks that a client that closes a held stream
// ends the gate and the API server's stream: nothing is left waiting.
func TestGateClientCloses(t *testing.T) {
	r := newRig(t, "application/json", false)
	r.g.hold()
	r.send(event(t, "application/json", watch.Modified, "2", false))
	assert.NilError(t, r.g.body().Close())
	<-r.ended
	<-r.upstream.closes
}

// BenchmarkHeldEvent measures what an event costs while its stream is
// held: the reader queues it, and the writer stays asleep. It reports the
// writer's wake-ups per held event, which must be 0: a held resource costs
// no polling, only the reading of what arrives.
func BenchmarkHeldEvent(b *testing.B) {
	frame := event(b, "application/json", watch.Modified, "2", false)
	pr, pw := io.Pipe()
	frames, _ := record.NewFrameReader(pr, "application/json")
	g := newGate(context.Background(), frames, pr, "application/json", false)
	read := make(chan struct{}, 1)
	g.onRead = func() { read <- struct{}{} }
	g.hold()
	g.start()
	body := g.body()
	defer body.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := pw.Write(frame); err != nil {
			b.Fatal(err)
		}
		<-read
	}
	b.StopTimer()
	b.ReportMetric(float64(g.wakeups.Load())/float64(b.N), "wakeups/event")
	if n := g.wakeups.Load(); n != 0 {
		b.Fatalf("the held gate's writer woke %d times", n)
	}
}
