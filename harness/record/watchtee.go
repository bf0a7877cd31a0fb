package record

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxWatchFrame bounds the bytes of one watch event the recorder keeps
// while the event's last byte has not arrived: far more than the largest
// object etcd stores. A stream past it is no longer read, only passed on.
const maxWatchFrame = 16 << 20

// watchTee is a watch's response body as its consumer reads it: the bytes
// the server sent, passed on as they arrive, none held back or delayed.
// Each event whose last byte the consumer has read is noted, as what the
// watch showed its actor. JSON events are JSON values one after another
// (the API server ends each with a newline); protobuf events are
// metav1.WatchEvent messages, each after its length in 4 big-endian bytes
// (apimachinery's LengthDelimitedFramer). A stream of another media type,
// or one that stops making sense, is passed on unread.
type watchTee struct {
	io.ReadCloser
	protobuf bool
	note     func(Shown)
	// ended and blind are called once each: when the stream ends (the
	// consumer read its end or an error, or closed it), and when the tee
	// stops reading its events.
	ended, blind func()
	endOnce      sync.Once
	buf          []byte // the start of the event not complete yet
	broken       bool   // the stream is no longer read
}

// newWatchTee returns body with the events of a stream of media type
// contentType noted as they are read, or body itself when the recorder
// cannot read that type.
//
// ended is called once when the stream ends, blind once when its events
// are not (or no longer) read: for a wait that must know which watches are
// open and whether what they showed is known.
func newWatchTee(body io.ReadCloser, contentType string, note func(Shown), ended, blind func()) io.ReadCloser {
	w := &watchTee{ReadCloser: body, note: note, ended: ended, blind: blind}
	switch mediaType(contentType) {
	case "application/json":
	case protobufType:
		w.protobuf = true
	default:
		w.broken = true
		blind()
	}
	return w
}

func (w *watchTee) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	if n > 0 && !w.broken {
		w.buf = append(w.buf, p[:n]...)
		if w.protobuf {
			w.protobufFrames()
		} else {
			w.jsonFrames()
		}
		if len(w.buf) > maxWatchFrame {
			w.stopReading()
		}
	}
	if err != nil {
		w.endOnce.Do(w.ended)
	}
	return n, err
}

// Close closes the stream, which ends it for the recorder too.
func (w *watchTee) Close() error {
	err := w.ReadCloser.Close()
	w.endOnce.Do(w.ended)
	return err
}

// stopReading gives up on the stream's events: the bytes still pass.
func (w *watchTee) stopReading() {
	if !w.broken {
		w.blind()
	}
	w.broken, w.buf = true, nil
}

// jsonFrames notes the complete JSON events at the start of w.buf and
// keeps the rest.
func (w *watchTee) jsonFrames() {
	if bytes.IndexByte(w.buf, '\n') < 0 {
		return // the server ends each event with a newline
	}
	dec := json.NewDecoder(bytes.NewReader(w.buf))
	used := 0
	for {
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				Metadata jsonMeta `json:"metadata"`
			} `json:"object"`
		}
		err := dec.Decode(&ev)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			w.stopReading()
			return
		}
		used = int(dec.InputOffset())
		m := ev.Object.Metadata
		w.note(Shown{Event: ev.Type, Namespace: m.Namespace, Name: m.Name, RV: m.ResourceVersion})
	}
	// The newline after the last event is its own; the next starts after.
	w.buf = append(w.buf[:0], bytes.TrimLeft(w.buf[used:], " \t\r\n")...)
}

// protobufFrames notes the complete protobuf events at the start of w.buf
// and keeps the rest.
func (w *watchTee) protobufFrames() {
	for len(w.buf) >= 4 {
		size := binary.BigEndian.Uint32(w.buf)
		if size > maxWatchFrame {
			w.stopReading()
			return
		}
		if uint32(len(w.buf)-4) < size {
			return
		}
		frame := w.buf[4 : 4+size]
		var ev metav1.WatchEvent
		if err := ev.Unmarshal(frame); err != nil {
			w.stopReading()
			return
		}
		s := Shown{Event: ev.Type}
		if a, ok := decodeProtobuf(ev.Object.Raw); ok && !a.status {
			s.Namespace, s.Name, s.RV = a.namespace, a.name, a.rv
		}
		w.note(s)
		w.buf = append(w.buf[:0], w.buf[4+size:]...)
	}
}
