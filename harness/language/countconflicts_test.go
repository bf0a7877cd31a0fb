package language

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/record"
)

// TestCountConflicts checks what conflicts counts: the 409s whose Status
// says Conflict, and not those of another reason, or of an unknown one,
// which it names.
func TestCountConflicts(t *testing.T) {
	calls := []*record.Exchange{
		{Seq: 1, Code: 409, Reason: "Conflict"},
		{Seq: 2, Code: 409, Reason: "AlreadyExists"},
		{Seq: 3, Code: 409, ReasonUnknown: "body in application/yaml not decoded"},
		{Seq: 4, Code: 409, Reason: "Conflict", NoReason: true},
		{Seq: 5, Code: 200, Reason: "OK"},
		{Seq: 6, Code: 409, Reason: "Conflict"},
	}
	got := countConflicts(calls)
	want := conflictCount{conflicts: 2, others: []string{"#2 409 AlreadyExists"},
		unknown: []string{"#3 409 (body in application/yaml not decoded)", "#4 409 (its Status names no reason)"}}
	assert.DeepEqual(t, got, want, cmp.AllowUnexported(conflictCount{}))
}
