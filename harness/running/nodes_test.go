package running

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
)

// TestNodesQuery checks which requests the scenario's view of nodes
// rewrites, and how: lists and watches of the collection of nodes get the
// scenario's label in their label selector, beside any they had; a node
// by name, a write, and any other resource go as they came.
func TestNodesQuery(t *testing.T) {
	const sel = ScenarioLabel + "=ns1"
	tests := []struct {
		name, method, target string
		want                 string // the query sent; "" when not rewritten
	}{
		{"list", "GET", "/api/v1/nodes", "labelSelector=racekit.dev%2Fscenario%3Dns1"},
		{"watch", "GET", "/api/v1/nodes?watch=true&resourceVersion=5", "labelSelector=racekit.dev%2Fscenario%3Dns1&resourceVersion=5&watch=true"},
		{"deprecated watch path", "GET", "/api/v1/watch/nodes", "labelSelector=racekit.dev%2Fscenario%3Dns1"},
		{"a selector of its own", "GET", "/api/v1/nodes?labelSelector=zone%3Da", "labelSelector=zone%3Da%2Cracekit.dev%2Fscenario%3Dns1"},
		{"one name, by field selector", "GET", "/api/v1/nodes?fieldSelector=metadata.name%3Dn1", "fieldSelector=metadata.name%3Dn1&labelSelector=racekit.dev%2Fscenario%3Dns1"},
		{"a node by name", "GET", "/api/v1/nodes/n1", ""},
		{"a node's status", "GET", "/api/v1/nodes/n1/status", ""},
		{"a write", "POST", "/api/v1/nodes", ""},
		{"another cluster-scoped resource", "GET", "/api/v1/persistentvolumes", ""},
		{"namespaced pods", "GET", "/api/v1/namespaces/ns1/pods", ""},
		{"a group's nodes", "GET", "/apis/example.com/v1/nodes", ""},
		{"another version", "GET", "/api/v2/nodes", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.target, nil)
			before := req.URL.String()
			var sent *http.Request
			rt := nodeView{selector: sel, next: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				sent = r
				return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
			})}
			_, err := rt.RoundTrip(req)
			assert.NilError(t, err)
			assert.Equal(t, req.URL.String(), before, "the request given was changed")
			want := req.URL.RawQuery
			if tc.want != "" {
				want = tc.want
			}
			assert.Equal(t, sent.URL.Path, req.URL.Path)
			if diff := cmp.Diff(want, sent.URL.RawQuery); diff != "" {
				t.Errorf("query sent (-want +got):\n%s", diff)
			}
		})
	}
}
