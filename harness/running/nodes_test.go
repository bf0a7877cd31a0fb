package running

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/racekit/racekit/internal/roundtrip"
	"gotest.tools/v3/assert"
	"k8s.io/apimachinery/pkg/labels"
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
			rt := nodeView{selector: sel, next: roundtrip.Func(func(r *http.Request) (*http.Response, error) {
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

// TestNodesQueryGenerated checks the rule of the scenario's view of nodes
// on generated requests: a GET of exactly /api/v1/nodes or
// /api/v1/watch/nodes (with slashes at either end or not) is sent with every parameter it had and the
// scenario's label added to its label selector (after the selector it
// had); any other request goes as it came. The generator mixes the
// segments of paths the rule must tell apart (another resource, a name, a
// subresource, a group, a namespace), and the test fails when it made no
// case of either outcome.
func TestNodesQueryGenerated(t *testing.T) {
	const sel = ScenarioLabel + "=rk-x-abcde"
	rnd := rand.New(rand.NewPCG(31, 7))
	segments := []string{"api", "apis", "v1", "v2", "watch", "nodes", "namespaces", "rk-x-abcde", "pods", "persistentvolumes", "n1", "status", "apps", ""}
	methods := []string{"GET", "GET", "GET", "POST", "PUT", "PATCH", "DELETE"}
	pick := func(list []string) string { return list[rnd.IntN(len(list))] }
	rewritten, kept := 0, 0
	for i := 0; i < 5000; i++ {
		var parts []string
		switch rnd.IntN(3) {
		case 0: // the forms the rule rewrites, and their neighbours
			parts = []string{"api", "v1", "nodes"}
			if rnd.IntN(2) == 0 {
				parts = []string{"api", "v1", "watch", "nodes"}
			}
			if rnd.IntN(3) == 0 {
				parts = append(parts, pick(segments))
			}
		default:
			for n := 1 + rnd.IntN(5); n > 0; n-- {
				parts = append(parts, pick(segments))
			}
		}
		path := "/" + strings.Join(parts, "/")
		q := url.Values{}
		if rnd.IntN(2) == 0 {
			q.Set("labelSelector", pick([]string{"zone=a", "a in (b,c)", "!x", ScenarioLabel + "=other"}))
		}
		if rnd.IntN(2) == 0 {
			q.Set("fieldSelector", "metadata.name=n1")
		}
		if rnd.IntN(2) == 0 {
			q.Set("watch", "true")
			q.Set("resourceVersion", strconv.Itoa(rnd.IntN(100)))
		}
		method := pick(methods)
		req := httptest.NewRequest(method, "http://x"+path+"?"+q.Encode(), nil)
		got, ok := nodesQuery(req, sel)

		// The API server reads a path without its slashes at either end
		// (RequestInfoFactory), so /api/v1/nodes/ is the collection too.
		trimmed := strings.Trim(path, "/")
		collection := method == "GET" && (trimmed == "api/v1/nodes" || trimmed == "api/v1/watch/nodes")
		if ok != collection {
			t.Fatalf("%s %s?%s: rewritten %v, want %v", method, path, q.Encode(), ok, collection)
		}
		if !ok {
			kept++
			continue
		}
		rewritten++
		sent, err := url.ParseQuery(got)
		assert.NilError(t, err)
		want := url.Values{}
		for k, v := range q {
			want[k] = v
		}
		wantSel := sel
		if have := q.Get("labelSelector"); have != "" {
			wantSel = have + "," + sel
		}
		want.Set("labelSelector", wantSel)
		if diff := cmp.Diff(want, sent); diff != "" {
			t.Fatalf("%s %s?%s: query sent (-want +got):\n%s", method, path, q.Encode(), diff)
		}
		s, err := labels.Parse(sent.Get("labelSelector"))
		assert.NilError(t, err, "the selector sent does not parse: %s", sent.Get("labelSelector"))
		assert.Assert(t, !s.Matches(labels.Set{}), "the selector sent selects a node without the scenario's label: %s", s)
	}
	t.Logf("%d requests rewritten, %d kept", rewritten, kept)
	assert.Assert(t, rewritten > 100 && kept > 100, "the generator made too few cases of one outcome: %d rewritten, %d kept", rewritten, kept)
}
