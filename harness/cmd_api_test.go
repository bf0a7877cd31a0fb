package harness

import (
	"context"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/hooks"
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
	var h history
	ctx := context.Background()
	a, b, c := &Scenario{Name: "a", ctx: ctx}, &Scenario{Name: "b", ctx: ctx}, &Scenario{Name: "c", ctx: ctx}

	taken, err := h.hold(a, "a.txtar:3")
	assert.NilError(t, err)
	assert.Assert(t, taken)
	taken, err = h.hold(a, "a.txtar:5")
	assert.NilError(t, err)
	assert.Assert(t, !taken, "a second hold by the same scenario is the same hold")
	_, err = h.hold(b, "b.txtar:2")
	assert.NilError(t, err)

	// b compacts: its own hold goes, a's keeps it waiting.
	compacted := make(chan struct{})
	var done func()
	go func() {
		var err error
		done, err = h.exclusive(b)
		assert.Check(t, err)
		close(compacted)
	}()
	select {
	case <-compacted:
		t.Fatal("the compaction ran while a held an old revision")
	default:
	}
	h.release(a)
	waitFor(t, compacted, "the compaction after a's release")

	// While the compaction runs, a new hold waits for it.
	held := make(chan struct{})
	go func() {
		_, err := h.hold(c, "c.txtar:4")
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
	var h history
	a := &Scenario{Name: "api_list_rv", ctx: context.Background()}
	_, err := h.hold(a, "api_list_rv.txtar:31")
	assert.NilError(t, err)
	h.mu.Lock()
	got := h.describe()
	h.mu.Unlock()
	assert.Equal(t, got, "api_list_rv (since api_list_rv.txtar:31)")
}

func TestWatchNextIsBounded(t *testing.T) {
	w := &watchStream{name: "w", events: make(chan watchEvent), wait: 20 * time.Millisecond}
	_, _, err := w.next(context.Background())
	assert.ErrorContains(t, err, "no event within 20ms")

	w.events = make(chan watchEvent, 1)
	w.events <- watchEvent{Type: "ERROR", Object: map[string]any{"kind": "Status", "code": int64(410), "reason": "Expired", "message": "too old"}}
	close(w.events)
	e, open, err := w.next(context.Background())
	assert.NilError(t, err)
	assert.Assert(t, open)
	assert.Equal(t, e.summary(), "ERROR 410 Expired: too old")
	_, open, err = w.next(context.Background())
	assert.NilError(t, err)
	assert.Assert(t, !open)
	assert.Equal(t, w.history(), "ERROR 410 Expired: too old, END")
}

func TestListAndWatchVersionsAreNoSymbols(t *testing.T) {
	tr := Trace{
		{Exchange: &Exchange{Seq: 1, Call: hooks.Call{Actor: "a", Verb: "create", Resource: "deployments", Name: "x"}, Code: 201, Reason: "Created", GotRV: "100"}},
		// The list's version may equal the create's, or not, depending
		// on what else the cluster wrote: it must not show.
		{Exchange: &Exchange{Seq: 2, Call: hooks.Call{Actor: "a", Verb: "list", Resource: "deployments"}, Code: 200, Reason: "OK", GotRV: "100"}},
		{Exchange: &Exchange{Seq: 3, Call: hooks.Call{Actor: "a", Verb: "list", Resource: "deployments"}, SentRV: "0", Code: 200, Reason: "OK", GotRV: "101"}},
		{Exchange: &Exchange{Seq: 4, Call: hooks.Call{Actor: "a", Verb: "watch", Resource: "deployments"}, SentRV: "100", Code: 200, Reason: "OK"}},
		{Exchange: &Exchange{Seq: 5, Call: hooks.Call{Actor: "a", Verb: "update", Resource: "deployments", Name: "x"}, SentRV: "100", Code: 200, Reason: "OK", GotRV: "102"}},
	}
	want := strings.Join([]string{
		"1 a create deployments/x          -> 201 Created rv1",
		"2 a list   deployments            -> 200 OK      rv*",
		"3 a list   deployments   sent 0   -> 200 OK      rv*",
		"4 a watch  deployments   sent rv* -> 200 OK",
		"5 a update deployments/x sent rv1 -> 200 OK      rv2",
	}, "\n") + "\n"
	assert.Equal(t, tr.Normalize(), want)
}

func TestJSONValueKeepsWholeNumbers(t *testing.T) {
	v, err := jsonValue(`{"replicas":3,"ratio":0.5,"rv":"42"}`)
	assert.NilError(t, err)
	assert.DeepEqual(t, v, map[string]any{"replicas": int64(3), "ratio": 0.5, "rv": "42"})
	_, err = jsonValue(`nginx`)
	assert.ErrorContains(t, err, "invalid character")
	_, err = jsonValue(`1 2`)
	assert.ErrorContains(t, err, "more than one value")
}

func TestParseOptions(t *testing.T) {
	got, err := parseOptions([]string{"limit=2", "continue="}, listOptions)
	assert.NilError(t, err)
	assert.DeepEqual(t, got, map[string]string{"limit": "2", "continue": ""})
	_, err = parseOptions([]string{"limt=2"}, listOptions)
	assert.ErrorContains(t, err, `unknown option "limt" (did you mean "limit"?)`)
	_, err = parseOptions([]string{"limit=1", "limit=2"}, listOptions)
	assert.ErrorContains(t, err, "option limit given twice")
}
