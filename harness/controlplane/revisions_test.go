package controlplane

import (
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// waitFor fails t unless ch is closed within a few seconds; it never
// sleeps.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not happen", what)
	}
}

func TestHistoryCompactionWaitsForHolders(t *testing.T) {
	var h RevisionHolds
	a, b, c := &Reader{Name: "a"}, &Reader{Name: "b"}, &Reader{Name: "c"}

	taken, err := h.Hold(a, "a.txtar:3")
	assert.NilError(t, err)
	assert.Assert(t, taken)
	taken, err = h.Hold(a, "a.txtar:5")
	assert.NilError(t, err)
	assert.Assert(t, !taken, "a second hold by the same scenario is the same hold")
	_, err = h.Hold(b, "b.txtar:2")
	assert.NilError(t, err)

	// b compacts: its own hold goes, a's keeps it waiting.
	compacted := make(chan struct{})
	var done func()
	go func() {
		var err error
		done, err = h.Exclusive(b)
		assert.Check(t, err)
		close(compacted)
	}()
	select {
	case <-compacted:
		t.Fatal("the compaction ran while a held an old revision")
	default:
	}
	h.Release(a)
	waitFor(t, compacted, "the compaction after a's release")

	// While the compaction runs, a new hold waits for it.
	held := make(chan struct{})
	go func() {
		_, err := h.Hold(c, "c.txtar:4")
		assert.Check(t, err)
		close(held)
	}()
	select {
	case <-held:
		t.Fatal("c took a hold during the compaction")
	default:
	}
	done()
	waitFor(t, held, "c's hold after the compaction")
}

func TestHistoryCompactionNamesHolders(t *testing.T) {
	var h RevisionHolds
	a := &Reader{Name: "api_list_rv"}
	_, err := h.Hold(a, "api_list_rv.txtar:31")
	assert.NilError(t, err)
	h.mu.Lock()
	got := h.describe()
	h.mu.Unlock()
	assert.Equal(t, got, "api_list_rv (since api_list_rv.txtar:31)")
}
