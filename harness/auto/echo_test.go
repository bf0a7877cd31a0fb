package auto

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/record"
)

// conflictMessage is the message the API server gives a 409 on name of
// group and resource, made by apimachinery itself.
func conflictMessage(group, resource, name string) string {
	return apierrors.NewConflict(schema.GroupResource{Group: group, Resource: resource}, name,
		errors.New("the object has been modified; please apply your changes to the latest version and try again")).Error()
}

// jsonString is s as Flatten renders a string value.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestEchoes checks which differences echoes leaves out: every field of a
// condition whose message carries a 409 the operator met on that object,
// and nothing else.
func TestEchoes(t *testing.T) {
	cond := func(typ, field, run string) explore.Difference {
		return explore.Difference{Kind: "field", Object: "rabbitmqclusters/r", Field: "status.conditions[type=" + typ + "]." + field, Reference: `"x"`, Run: run}
	}
	msg := jsonString(conflictMessage("apps", "statefulsets", "r-server"))
	echo := []explore.Difference{cond("ReconcileSuccess", "message", msg), cond("ReconcileSuccess", "reason", `"Error"`), cond("ReconcileSuccess", "status", `"False"`)}
	ready := cond("Ready", "status", `"False"`)
	op409 := record.Row{Actor: "op", Verb: "update", Object: "statefulsets/r-server", Code: 409}
	for _, tc := range []struct {
		name string
		ds   []explore.Difference
		rows []record.Row
		want []explore.Difference
	}{
		{"the operator met the 409: the condition goes, another stays", append(append([]explore.Difference{}, echo...), ready), []record.Row{op409}, []explore.Difference{ready}},
		{"no 409 in the run", echo, nil, echo},
		{"another actor's 409", echo, []record.Row{{Actor: "alice", Verb: "update", Object: "statefulsets/r-server", Code: 409}}, echo},
		{"a 409 on another object", echo, []record.Row{{Actor: "op", Verb: "update", Object: "statefulsets/other", Code: 409}}, echo},
		{"a 409 on the status subresource", echo, []record.Row{{Actor: "op", Verb: "update", Object: "statefulsets/r-server/status", Code: 409}}, nil},
		{"wrapped in the operator's words", []explore.Difference{cond("Synced", "message", jsonString("failed to sync: "+conflictMessage("", "services", "r-nodes")))},
			[]record.Row{{Actor: "op", Verb: "update", Object: "services/r-nodes", Code: 409}}, nil},
		{"a field outside a keyed list", []explore.Difference{{Kind: "field", Object: "configmaps/c", Field: "data.err", Run: msg}}, []record.Row{op409}, []explore.Difference{{Kind: "field", Object: "configmaps/c", Field: "data.err", Run: msg}}},
		{"a history difference", []explore.Difference{{Kind: "history", Object: "statefulsets/r-server", Field: "delete by op (200)", Reference: "1", Run: "2"}}, []record.Row{op409},
			[]explore.Difference{{Kind: "history", Object: "statefulsets/r-server", Field: "delete by op (200)", Reference: "1", Run: "2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n := echoes(tc.ds, tc.rows, []string{"op"})
			assert.DeepEqual(t, got, tc.want)
			assert.Equal(t, n, len(tc.ds)-len(tc.want))
		})
	}
}

// TestEchoesGenerated holds echoes to its rule over seeded cases: with
// conflict messages made by apimachinery for resources of any group and
// names of any shape, a condition is left out exactly when its message
// carries the 409 of a write the operator made on that very object, and
// every field of it goes with it.
func TestEchoesGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 7))
	groups := []string{"", "apps", "rabbitmq.com", "demo.racekit.dev"}
	resources := []string{"statefulsets", "services", "configmaps", "rabbitmqclusters"}
	names := []string{"r", "r-server", "r.x", "r-server-0", "a\"b"}
	actors := []string{"op", "kcm", "alice"}
	for i := range 2000 {
		g, res, name := groups[r.IntN(len(groups))], resources[r.IntN(len(resources))], names[r.IntN(len(names))]
		row := record.Row{Actor: actors[r.IntN(len(actors))], Verb: "update", Object: resources[r.IntN(len(resources))] + "/" + names[r.IntN(len(names))], Code: []int{409, 200, 422}[r.IntN(3)]}
		if r.IntN(4) == 0 {
			row.Object += "/status"
		}
		text := conflictMessage(g, res, name)
		if r.IntN(2) == 0 {
			text = "failed to reconcile: " + text
		}
		typ := []string{"Ready", "ReconcileSuccess"}[r.IntN(2)]
		ds := []explore.Difference{
			{Kind: "field", Object: "x/y", Field: "status.conditions[type=" + typ + "].message", Run: jsonString(text)},
			{Kind: "field", Object: "x/y", Field: "status.conditions[type=" + typ + "].status", Run: `"False"`},
			{Kind: "field", Object: "x/y", Field: "spec.size", Run: `"2"`},
		}
		want := row.Actor == "op" && row.Code == 409 && (row.Object == res+"/"+name || row.Object == res+"/"+name+"/status")
		got, n := echoes(ds, []record.Row{row}, []string{"op"})
		if want {
			assert.Check(t, cmp.Equal(got, ds[2:]), "case %d: %v on %s: kept %v", i, row, text, got)
			assert.Equal(t, n, 2, fmt.Sprintf("case %d", i))
		} else {
			assert.Check(t, cmp.Equal(got, ds), "case %d: %v on %s: left out %d", i, row, text, n)
		}
	}
}
