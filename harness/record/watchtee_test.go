package record

import (
	"bytes"
	"io"
	"testing"

	"gotest.tools/v3/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// TestWatchTee checks that a watch's body reaches its reader byte for
// byte, and that each event is noted once the reader has read its last
// byte, and not before: for JSON events (newline-delimited, as the API
// server sends them) and protobuf ones (length-prefixed WatchEvents).
func TestWatchTee(t *testing.T) {
	cm := func(name, rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv}}
	}
	events := []struct {
		typ string
		obj runtime.Object
	}{
		{"ADDED", cm("a", "7")},
		{"MODIFIED", cm("a", "8")},
		{"BOOKMARK", &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{ResourceVersion: "9"}}},
		{"DELETED", cm("b", "10")},
	}
	want := []Shown{
		{Event: "ADDED", Namespace: "ns", Name: "a", RV: "7"},
		{Event: "MODIFIED", Namespace: "ns", Name: "a", RV: "8"},
		{Event: "BOOKMARK", RV: "9"},
		{Event: "DELETED", Namespace: "ns", Name: "b", RV: "10"},
	}
	streams := map[string]func(t *testing.T) (stream []byte, ends []int){
		"application/json": func(t *testing.T) ([]byte, []int) {
			var b bytes.Buffer
			var ends []int
			for _, e := range events {
				var obj bytes.Buffer
				assert.NilError(t, jsonCodec.Encode(e.obj, &obj))
				assert.NilError(t, jsonCodec.Encode(&metav1.WatchEvent{Type: e.typ, Object: runtime.RawExtension{Raw: bytes.TrimSpace(obj.Bytes())}}, &b))
				ends = append(ends, b.Len())
			}
			return b.Bytes(), ends
		},
		"application/vnd.kubernetes.protobuf;stream=watch": func(t *testing.T) ([]byte, []int) {
			var b bytes.Buffer
			var ends []int
			w := protobuf.LengthDelimitedFramer.NewFrameWriter(&b)
			for _, e := range events {
				var obj bytes.Buffer
				assert.NilError(t, protoCodec.Encode(e.obj, &obj))
				ev := metav1.WatchEvent{Type: e.typ, Object: runtime.RawExtension{Raw: obj.Bytes()}}
				data, err := ev.Marshal()
				assert.NilError(t, err)
				_, err = w.Write(data)
				assert.NilError(t, err)
				ends = append(ends, b.Len())
			}
			return b.Bytes(), ends
		},
	}
	for contentType, encode := range streams {
		t.Run(contentType, func(t *testing.T) {
			stream, ends := encode(t)
			var noted []Shown
			var notedAt []int
			read, ended, blind := 0, 0, 0
			tee := newWatchTee(io.NopCloser(bytes.NewReader(stream)), contentType, func(s Shown) {
				noted = append(noted, s)
				notedAt = append(notedAt, read+1) // during the read of byte read+1
			}, func() { ended++ }, func() { blind++ })
			var got bytes.Buffer
			one := make([]byte, 1)
			for {
				n, err := tee.Read(one)
				read += n
				got.Write(one[:n])
				if err == io.EOF {
					break
				}
				assert.NilError(t, err)
			}
			assert.DeepEqual(t, got.Bytes(), stream)
			assert.DeepEqual(t, noted, want)
			assert.DeepEqual(t, notedAt, ends) // each with its last byte, none later
			// The end is noted once, at the end of the stream and not
			// again when the consumer closes it; every event was read.
			assert.NilError(t, tee.Close())
			assert.Equal(t, ended, 1)
			assert.Equal(t, blind, 0)
		})
	}
}

// TestWatchTeeBlind: a stream whose events the recorder cannot read is
// passed on whole, and said to be unread, so that no wait takes what it
// showed for all of it.
func TestWatchTeeBlind(t *testing.T) {
	for _, tc := range []struct {
		name, contentType string
		stream            []byte
		blind             int
	}{
		{"yaml", "application/yaml", []byte("type: ADDED\n"), 1},
		{"broken json", "application/json", []byte("{\"type\":\n]\n"), 1},
		{"json", "application/json", []byte(`{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"5"}}}` + "\n"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ended, blind := 0, 0
			tee := newWatchTee(io.NopCloser(bytes.NewReader(tc.stream)), tc.contentType, func(Shown) {}, func() { ended++ }, func() { blind++ })
			got, err := io.ReadAll(tee)
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tc.stream)
			assert.Equal(t, blind, tc.blind)
			assert.Equal(t, ended, 1)
		})
	}
}
