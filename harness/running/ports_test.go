package running

import (
	"context"
	"errors"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/language"
)

// TestPortTurnsInProcess: scenarios of one process that need the same
// fixed port take turns for it without a time limit, however long the
// holder keeps it, since every holder ends; the wait bound (within) is
// only for a port another process holds. On the code before ports were
// the run's, the second scenario gave up after its wait timeout.
func TestPortTurnsInProcess(t *testing.T) {
	const port, within = 47917, 100 * time.Millisecond
	first, err := language.NewScenario(context.Background(), controlPlane(t), "turns-first", t.TempDir())
	assert.NilError(t, err)
	second, err := language.NewScenario(context.Background(), controlPlane(t), "turns-second", t.TempDir())
	assert.NilError(t, err)
	defer second.Close()

	assert.NilError(t, lockPorts(first, "a", []int{port}, "first.txtar:1", within))
	got := make(chan error, 1)
	go func() { got <- lockPorts(second, "b", []int{port}, "second.txtar:1", within) }()
	// The second must still wait well past its bound: the holder runs.
	select {
	case err := <-got:
		first.Close()
		t.Fatalf("the second scenario stopped waiting while the first held the port: %v", err)
	case <-time.After(5 * within):
	}
	first.Close() // the first scenario ends, and lets the port go
	select {
	case err := <-got:
		assert.NilError(t, err)
	case <-time.After(DefaultWait):
		t.Fatal("the second scenario never got the port the first let go")
	}
	assert.DeepEqual(t, Ports(second), []int{port})
}

// TestPortHeldBySameName: a name's next life (a restart) keeps the port it
// holds, and another name of the scenario takes it once the first no
// longer runs; one that still runs is refused, since the scenario would
// wait for itself.
func TestPortHeldBySameName(t *testing.T) {
	const port = 47918
	sc, err := language.NewScenario(context.Background(), controlPlane(t), "same-name", t.TempDir())
	assert.NilError(t, err)
	defer sc.Close()
	assert.NilError(t, lockPorts(sc, "a", []int{port}, "x.txtar:1", time.Second))
	// Nothing runs as a, and a takes it again at once (a restart).
	assert.NilError(t, lockPorts(sc, "a", []int{port}, "x.txtar:2", time.Millisecond))
	assert.NilError(t, lockPorts(sc, "b", []int{port}, "x.txtar:3", time.Millisecond))
	held := heldKey.Of(sc)
	held.mu.Lock()
	holder := held.by[port].name
	held.mu.Unlock()
	assert.Equal(t, holder, "b")
	err = lockPorts(sc, "c", []int{port, port + 1}, "x.txtar:4", time.Millisecond)
	assert.NilError(t, err) // b does not run either
	assert.Assert(t, !errors.Is(err, language.ErrUnavailable))
}
