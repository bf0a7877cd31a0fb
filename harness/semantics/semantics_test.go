package semantics

import (
	"context"
	"testing"
	"time"

	"github.com/racekit/racekit/harness/language"
	"gotest.tools/v3/assert"
)

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
	got, err := language.ParseOptions([]string{"limit=2", "continue="}, listOptions)
	assert.NilError(t, err)
	assert.DeepEqual(t, got, map[string]string{"limit": "2", "continue": ""})
	_, err = language.ParseOptions([]string{"limt=2"}, listOptions)
	assert.ErrorContains(t, err, `unknown option "limt" (did you mean "limit"?)`)
	_, err = language.ParseOptions([]string{"limit=1", "limit=2"}, listOptions)
	assert.ErrorContains(t, err, "option limit given twice")
}
