package record

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"gotest.tools/v3/assert"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	restclientwatch "k8s.io/client-go/rest/watch"
)

// watchMediaTypes are the watch encodings racekit frames.
var watchMediaTypes = []string{"application/json", protobufType}

// encodeWatch encodes events as the API server streams them, with
// apimachinery's own framers and serializers for mediaType.
func encodeWatch(t *testing.T, mediaType string, events ...watch.Event) []byte {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(kscheme.Codecs.SupportedMediaTypes(), mediaType)
	assert.Assert(t, ok, mediaType)
	var out bytes.Buffer
	enc := streaming.NewEncoder(info.StreamSerializer.Framer.NewFrameWriter(&out), info.StreamSerializer.Serializer)
	for _, e := range events {
		var obj bytes.Buffer
		assert.NilError(t, info.Serializer.Encode(e.Object, &obj))
		assert.NilError(t, enc.Encode(&metav1.WatchEvent{Type: string(e.Type), Object: runtime.RawExtension{Raw: obj.Bytes()}}))
	}
	return out.Bytes()
}

// decodeWatch decodes a stream as client-go's REST client does, and
// returns its events and the error that ended it.
func decodeWatch(t *testing.T, mediaType string, stream []byte) ([]watch.Event, error) {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(kscheme.Codecs.SupportedMediaTypes(), mediaType)
	assert.Assert(t, ok, mediaType)
	frames := info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(stream)))
	dec := restclientwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer), info.Serializer)
	var out []watch.Event
	for {
		typ, obj, err := dec.Decode()
		if err != nil {
			return out, err
		}
		out = append(out, watch.Event{Type: typ, Object: obj})
	}
}

func configMap(name, rv string, annotations map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv, Annotations: annotations},
	}
}

// TestFrameReader reads streams that apimachinery encoded, event by event,
// and checks that each frame is the bytes as sent, so that passing the
// frames on one after another gives back the stream, and that the BOOKMARK
// that ends a watch-list's initial events is told from another.
func TestFrameReader(t *testing.T) {
	events := []watch.Event{
		{Type: watch.Added, Object: configMap("a", "10", nil)},
		{Type: watch.Bookmark, Object: configMap("", "11", map[string]string{initialEventsEnd: "true"})},
		{Type: watch.Modified, Object: configMap("a", "12", nil)},
		{Type: watch.Bookmark, Object: configMap("", "13", nil)},
	}
	for _, mt := range watchMediaTypes {
		t.Run(mt, func(t *testing.T) {
			stream := encodeWatch(t, mt, events...)
			fr, ok := NewFrameReader(bytes.NewReader(stream), mt+";stream=watch")
			assert.Assert(t, ok)
			var joined []byte
			var got []WatchFrame
			for {
				f, err := fr.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				assert.NilError(t, err)
				joined = append(joined, f.Bytes...)
				f.Bytes = nil
				got = append(got, f)
			}
			assert.DeepEqual(t, got, []WatchFrame{
				{Type: "ADDED", RV: "10"},
				{Type: "BOOKMARK", RV: "11", InitialEventsEnd: true},
				{Type: "MODIFIED", RV: "12"},
				{Type: "BOOKMARK", RV: "13"},
			})
			assert.DeepEqual(t, joined, stream)
			back, err := decodeWatch(t, mt, joined)
			assert.Assert(t, errors.Is(err, io.EOF), "%v", err)
			assert.Equal(t, len(back), len(events))
		})
	}
	_, ok := NewFrameReader(bytes.NewReader(nil), "application/yaml")
	assert.Assert(t, !ok, "racekit cannot frame YAML")
}

// TestFrameReaderRefuses checks that a stream cut inside an event, or one
// that is not what its media type says, is an error, not an event.
func TestFrameReaderRefuses(t *testing.T) {
	for _, mt := range watchMediaTypes {
		t.Run(mt, func(t *testing.T) {
			stream := encodeWatch(t, mt, watch.Event{Type: watch.Added, Object: configMap("a", "10", nil)})
			fr, _ := NewFrameReader(bytes.NewReader(stream[:len(stream)-3]), mt)
			_, err := fr.Next()
			assert.Assert(t, errors.Is(err, ErrFrame), "a cut event read as %v", err)
		})
	}
	fr, _ := NewFrameReader(bytes.NewReader([]byte("[1,2]\n")), "application/json")
	_, err := fr.Next()
	assert.ErrorContains(t, err, "no JSON object")
	assert.Assert(t, errors.Is(err, ErrFrame))
	// A gzip stream is no stream of events: the transport must undo the
	// encoding first.
	fr, _ = NewFrameReader(bytes.NewReader([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}), protobufType)
	_, err = fr.Next()
	assert.Assert(t, errors.Is(err, ErrFrame), "%v", err)
}

// TestExpiredFrame checks that the 410 that ends a held watch for a relist
// is an event client-go reads as the API server's own: an ERROR whose
// Status is Expired, which a reflector answers by listing again.
func TestExpiredFrame(t *testing.T) {
	for _, mt := range watchMediaTypes {
		t.Run(mt, func(t *testing.T) {
			before := encodeWatch(t, mt, watch.Event{Type: watch.Added, Object: configMap("a", "10", nil)})
			frame, err := ExpiredFrame(mt+";stream=watch", "too old")
			assert.NilError(t, err)
			events, err := decodeWatch(t, mt, append(before, frame...))
			assert.Assert(t, errors.Is(err, io.EOF), "%v", err)
			assert.Equal(t, len(events), 2)
			assert.Equal(t, events[1].Type, watch.Error)
			got := apierrors.FromObject(events[1].Object)
			assert.Assert(t, apierrors.IsResourceExpired(got), "%#v", got)
			assert.ErrorContains(t, got, "too old")
			var st apierrors.APIStatus
			assert.Assert(t, errors.As(got, &st))
			assert.Equal(t, st.Status().Code, int32(410))
			// The recorder reads it as the actor does.
			var shown []Shown
			tee := newWatchTee(io.NopCloser(bytes.NewReader(frame)), mt, func(s Shown) { shown = append(shown, s) }, func() {}, func() {})
			_, err = io.ReadAll(tee)
			assert.NilError(t, err)
			assert.DeepEqual(t, shown, []Shown{{Event: "ERROR"}})
		})
	}
	_, err := ExpiredFrame("application/yaml", "x")
	assert.ErrorContains(t, err, "racekit frames JSON and protobuf")
}
