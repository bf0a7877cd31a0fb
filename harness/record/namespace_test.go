package record

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
)

// TestForeignNamespace records calls in the scenario's namespace, in
// another, and on a cluster-scoped object, and checks that only the one
// in another namespace is Foreign, is left out of Own and Calls, and shows
// its namespace in every rendering, while the others render as they would
// without a namespace at all.
func TestForeignNamespace(t *testing.T) {
	rec := &Recorder{}
	rec.SetNamespace("ns")
	for _, s := range []step{
		{"GET", "/api/v1/namespaces/ns/configmaps/c", 200, cm("1", "")},
		{"PUT", "/api/v1/namespaces/theirs/configmaps/c", 200, cm("2", "")},
		{"GET", "/api/v1/namespaces/ns", 200, cm("3", "")},
	} {
		send(t, rec, s)
	}
	tr := rec.Trace()
	var foreign []bool
	for _, x := range tr.Exchanges() {
		foreign = append(foreign, x.Foreign)
	}
	assert.DeepEqual(t, foreign, []bool{false, true, false})
	assert.Equal(t, len(tr.Own()), 2)
	assert.Equal(t, len(tr.Calls("bob", "update", "configmaps/c")), 0, "Calls counts another namespace's update")
	assert.Equal(t, len(tr.Calls("bob", "get", "configmaps/c")), 1)

	want := `1 bob get    configmaps/c                     -> 200 OK rv1
2 bob update configmaps/c (namespace theirs)  -> 200 OK rv2
3 bob get    namespaces/ns                    -> 200 OK rv3
`
	if diff := cmp.Diff(want, tr.Normalize()); diff != "" {
		t.Errorf("Normalize (-want +got)\n%s", diff)
	}
	rows := tr.Rows()
	assert.Assert(t, strings.Contains(Timeline(rows, false), "update configmaps/c (namespace theirs)"), "%s", Timeline(rows, false))
	assert.Assert(t, strings.Contains(Mermaid(rows), "2. update configmaps/c (namespace theirs)"), "%s", Mermaid(rows))
	js, err := JSON(rows)
	assert.NilError(t, err)
	var decoded []map[string]any
	assert.NilError(t, json.Unmarshal([]byte(js), &decoded))
	var got []any
	for _, r := range decoded {
		got = append(got, r["otherNamespace"])
	}
	assert.DeepEqual(t, got, []any{nil, "theirs", nil})

	// A recorder that knows no namespace marks nothing: every call renders
	// as it did before namespaces were shown.
	plain := &Recorder{}
	send(t, plain, step{"PUT", "/api/v1/namespaces/theirs/configmaps/c", 200, cm("2", "")})
	assert.Assert(t, !plain.Trace().Exchanges()[0].Foreign)
	assert.Assert(t, !strings.Contains(plain.Trace().Normalize(), "namespace"), "%s", plain.Trace().Normalize())
}
