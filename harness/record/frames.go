package record

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// WatchFrame is one event of a watch stream as it came on the wire: its
// bytes, framing and all, so that it can be passed on unchanged, and what
// a hold needs to know of it.
type WatchFrame struct {
	// Bytes is the event as the API server sent it: a JSON value and its
	// newline, or a protobuf WatchEvent after its length in 4 big-endian
	// bytes.
	Bytes []byte
	// Type is the event's type: ADDED, MODIFIED, DELETED, BOOKMARK or
	// ERROR.
	Type string
	// RV is the resourceVersion of the event's object.
	RV string
	// InitialEventsEnd is set on the BOOKMARK that ends the initial events
	// of a watch-list (sendInitialEvents=true): the events before it are
	// the state the watch started from, a list in all but name.
	InitialEventsEnd bool
}

// initialEventsEnd is the annotation of the BOOKMARK that ends a
// watch-list's initial events (metav1.InitialEventsAnnotationKey).
const initialEventsEnd = metav1.InitialEventsAnnotationKey

// ErrFrame is what a FrameReader's error wraps when the stream is not
// what its media type says: a value that is no JSON object, a protobuf
// message that is no WatchEvent, an event cut off.
var ErrFrame = errors.New("not a watch event")

// FrameReader reads a watch response body one event at a time, in the
// stream's media type.
type FrameReader struct {
	r        *bufio.Reader
	protobuf bool
	json     *json.Decoder
}

// NewFrameReader returns a reader of the events in body, a watch stream of
// media type contentType, or false when racekit cannot frame that type
// (neither JSON nor protobuf).
func NewFrameReader(body io.Reader, contentType string) (*FrameReader, bool) {
	switch mediaType(contentType) {
	case "application/json":
		return &FrameReader{json: json.NewDecoder(body)}, true
	case protobufType:
		return &FrameReader{r: bufio.NewReader(body), protobuf: true}, true
	}
	return nil, false
}

// Next returns the stream's next event; io.EOF when the stream ended
// between two events.
func (f *FrameReader) Next() (WatchFrame, error) {
	if f.protobuf {
		return f.nextProtobuf()
	}
	return f.nextJSON()
}

func (f *FrameReader) nextJSON() (WatchFrame, error) {
	var raw json.RawMessage
	if err := f.json.Decode(&raw); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) || errors.Is(err, io.ErrUnexpectedEOF) {
			return WatchFrame{}, fmt.Errorf("%w: %w", ErrFrame, err)
		}
		return WatchFrame{}, err
	}
	var ev struct {
		Type   string `json:"type"`
		Object struct {
			Metadata struct {
				ResourceVersion string            `json:"resourceVersion"`
				Annotations     map[string]string `json:"annotations"`
			} `json:"metadata"`
		} `json:"object"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		return WatchFrame{}, fmt.Errorf("%w: a value that is no JSON object: %w", ErrFrame, err)
	}
	m := ev.Object.Metadata
	return WatchFrame{Bytes: append(raw, '\n'), Type: ev.Type, RV: m.ResourceVersion,
		InitialEventsEnd: ev.Type == "BOOKMARK" && m.Annotations[initialEventsEnd] == "true"}, nil
}

func (f *FrameReader) nextProtobuf() (WatchFrame, error) {
	var size [4]byte
	if _, err := io.ReadFull(f.r, size[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return WatchFrame{}, fmt.Errorf("%w: a stream that ends inside an event's length: %w", ErrFrame, err)
		}
		return WatchFrame{}, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > maxWatchFrame {
		return WatchFrame{}, fmt.Errorf("%w: a protobuf event of %d bytes, more than the %d racekit reads", ErrFrame, n, maxWatchFrame)
	}
	frame := make([]byte, 4+n)
	copy(frame, size[:])
	if _, err := io.ReadFull(f.r, frame[4:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return WatchFrame{}, fmt.Errorf("%w: a stream that ends inside an event: %w", ErrFrame, err)
		}
		return WatchFrame{}, err
	}
	var ev metav1.WatchEvent
	if err := ev.Unmarshal(frame[4:]); err != nil {
		return WatchFrame{}, fmt.Errorf("%w: a protobuf message that is no WatchEvent: %w", ErrFrame, err)
	}
	wf := WatchFrame{Bytes: frame, Type: ev.Type}
	if om, ok := protobufObjectMeta(ev.Object.Raw); ok {
		wf.RV = om.ResourceVersion
		wf.InitialEventsEnd = ev.Type == "BOOKMARK" && om.Annotations[initialEventsEnd] == "true"
	}
	return wf, nil
}

// protobufObjectMeta reads the metadata of an object in Kubernetes'
// protobuf encoding, of any kind: every API message keeps it in field 1.
func protobufObjectMeta(body []byte) (metav1.ObjectMeta, bool) {
	var om metav1.ObjectMeta
	data, ok := bytes.CutPrefix(body, protobufMagic)
	if !ok {
		return om, false
	}
	var u runtime.Unknown
	if err := u.Unmarshal(data); err != nil {
		return om, false
	}
	raw, ok := protobufField(u.Raw, 1)
	if !ok || om.Unmarshal(raw) != nil {
		return om, false
	}
	return om, true
}

// ExpiredFrame returns an ERROR watch event that carries a Status 410
// Expired with message, framed in contentType's encoding as the API server
// frames its events: what kube-apiserver sends on a watch whose
// resourceVersion etcd has compacted, and after which an informer lists
// again.
func ExpiredFrame(contentType, message string) ([]byte, error) {
	status := &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: message,
		Reason: metav1.StatusReasonExpired, Code: 410,
	}
	switch mediaType(contentType) {
	case "application/json":
		obj, err := json.Marshal(status)
		if err != nil {
			return nil, err
		}
		ev, err := json.Marshal(&metav1.WatchEvent{Type: "ERROR", Object: runtime.RawExtension{Raw: obj}})
		if err != nil {
			return nil, err
		}
		return append(ev, '\n'), nil
	case protobufType:
		var obj bytes.Buffer
		if err := protoCodec.Encode(status, &obj); err != nil {
			return nil, fmt.Errorf("encode a Status in protobuf: %w", err)
		}
		ev := &metav1.WatchEvent{Type: "ERROR", Object: runtime.RawExtension{Raw: obj.Bytes()}}
		data, err := ev.Marshal()
		if err != nil {
			return nil, err
		}
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(data))), data...), nil
	}
	return nil, fmt.Errorf("no watch events in %q: racekit frames JSON and protobuf", contentType)
}
