package tail

import (
	"strings"
	"sync"
	"testing"
)

// TestPrefixedConcurrent writes into one prefixed writer from several
// goroutines at once, as two lives of a process's output can: go test
// -race fails it if the writer is not safe for that.
func TestPrefixedConcurrent(t *testing.T) {
	tl := New(1 << 20)
	w := tl.Prefixed("p")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, _ = w.Write([]byte("a line\n"))
			}
		}()
	}
	wg.Wait()
	if got := strings.Count(tl.String(), "p: a line\n"); got != 400 {
		t.Fatalf("got %d lines, want 400", got)
	}
}
