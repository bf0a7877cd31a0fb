package running

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/hooks"
)

// TestWireSince checks what two readings of a life's signal may have
// between them and still settle it: nothing, or only answered reads (a
// poller's, one perhaps still in flight); a write, a failed write, an
// unanswered write, a hook's firing or a view's change is a change, and a
// call on an ignored resource is none.
func TestWireSince(t *testing.T) {
	call := func(verb, resource string, code int) record.Entry {
		return record.Entry{Exchange: &record.Exchange{Call: hooks.Call{Actor: "op", Verb: verb, Resource: resource}, Code: code}}
	}
	settled := record.Entry{Settled: &record.Settled{Name: "op"}}
	hook := record.Entry{Hook: &record.HookFiring{}}
	view := record.Entry{View: &record.ViewChange{}}
	for _, tc := range []struct {
		name   string
		t      record.Trace
		ignore map[string]bool
		want   wireChange
	}{
		{"nothing", nil, nil, wireQuiet},
		{"another idle's row", record.Trace{settled}, nil, wireQuiet},
		{"a poller's gets", record.Trace{call("get", "configmaps", 200), call("get", "configmaps", 200)}, nil, wireReads},
		{"a get of nothing", record.Trace{call("get", "configmaps", 404)}, nil, wireReads},
		{"a list and a watch", record.Trace{call("list", "pods", 200), call("watch", "pods", 200)}, nil, wireReads},
		{"a write", record.Trace{call("get", "configmaps", 200), call("update", "configmaps", 200)}, nil, wireWrites},
		{"a write that failed", record.Trace{call("update", "configmaps", 409)}, nil, wireWrites},
		{"a read not answered yet", record.Trace{call("get", "configmaps", 0)}, nil, wireReads},
		{"a write not answered yet", record.Trace{call("update", "configmaps", 0)}, nil, wireWrites},
		{"a read not answered yet, to the goroutines", record.Trace{call("get", "configmaps", 0)}, nil, wireWrites},
		{"a hook fired", record.Trace{hook}, nil, wireWrites},
		{"a view changed", record.Trace{view}, nil, wireWrites},
		{"an ignored write", record.Trace{call("update", "leases", 200)}, map[string]bool{"leases": true}, wireQuiet},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, wireSince(tc.t, tc.ignore, !strings.HasSuffix(tc.name, "to the goroutines")), tc.want)
		})
	}
}
