// Package tail keeps the last bytes written to it: the end of a process's
// output, for failure messages, without keeping all of it.
package tail

import (
	"bytes"
	"io"
	"sync"
)

// Tail keeps the last Size bytes written to it. It is safe for concurrent
// use.
type Tail struct {
	mu   sync.Mutex
	buf  []byte
	size int
}

// New returns a Tail that keeps the last size bytes.
func New(size int) *Tail { return &Tail{size: size} }

// Size is how many bytes t keeps.
func (t *Tail) Size() int { return t.size }

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.size; over > 0 {
		t.buf = append(t.buf[:0:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String returns what t keeps.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// Prefixed returns a writer into t that marks each line with name, so that
// two processes' output can share one tail. It is safe for concurrent use:
// envtest, when a start times out and it starts the process again, copies
// the old process's output and the new one's into it at once.
func (t *Tail) Prefixed(name string) io.Writer {
	return &linePrefixer{w: t, prefix: []byte(name + ": ")}
}

type linePrefixer struct {
	w      io.Writer
	prefix []byte
	mu     sync.Mutex
	mid    bool
}

func (l *linePrefixer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []byte
	for _, line := range bytes.SplitAfter(p, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if !l.mid {
			out = append(out, l.prefix...)
		}
		out = append(out, line...)
		l.mid = line[len(line)-1] != '\n'
	}
	if _, err := l.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
