package auto

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/hooks"
)

// TestAwaited checks which new watch a stale plan's restart waits for: the
// resource's own when the operator's first life watched it as it started
// (before its first write), else the first it watched then; a resource
// watched only once a reconcile read it is never awaited.
func TestAwaited(t *testing.T) {
	row := func(actor, verb, object string, code int) record.Entry {
		res, name, _ := strings.Cut(object, "/")
		return record.Entry{Exchange: &record.Exchange{Call: hooks.Call{Actor: actor, Verb: verb, Resource: res, Name: name}, Code: code}}
	}
	rows := record.Trace{
		row("op", "list", "clusters", 200),
		row("op", "watch", "clusters", 200),
		row("other", "watch", "secrets", 200),
		row("op", "watch", "statefulsets", 200),
		row("op", "watch", "services", 500),
		row("op", "create", "statefulsets/s", 201),
		row("op", "watch", "pods", 200),
	}
	assert.DeepEqual(t, eagerWatches(rows.Rows(), "op"), []string{"clusters", "statefulsets"})
	p := &planner{learned: &explore.Learned{Trace: rows}}
	op := Operator{Name: "op", Actor: "op"}
	for res, want := range map[string]string{
		"clusters":     "clusters",
		"statefulsets": "statefulsets",
		"pods":         "clusters", // watched once a reconcile read one
		"services":     "clusters", // its first watch failed
	} {
		assert.Equal(t, p.awaited(op, res), want, res)
	}
	none := &planner{learned: &explore.Learned{Trace: rows[5:]}}
	assert.Equal(t, none.awaited(op, "pods"), "pods", "no watch before the first write: the resource's own")
}
