package proxy

import (
	"net/http"
	"testing"

	"gotest.tools/v3/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/racekit/racekit/internal/roundtrip"
)

// namespacedForTest says which resources the tests' API server serves per
// namespace: configmaps, deployments and webapps, not nodes, namespaces or
// clusterroles.
func namespacedForTest(r schema.GroupVersionResource) bool {
	switch r {
	case schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		schema.GroupVersionResource{Group: "demo.racekit.dev", Version: "v1alpha1", Resource: "webapps"}:
		return true
	}
	return false
}

var testConfinement = Confinement{Namespace: "mine", Namespaced: namespacedForTest}

// TestConfinementPath checks which requests a confinement rewrites: a GET
// of a namespaced collection across every namespace, in each of the forms
// the API server serves it, and nothing else.
func TestConfinementPath(t *testing.T) {
	tests := []struct {
		name, method, path, want string
	}{
		{"core list", "GET", "/api/v1/configmaps", "/api/v1/namespaces/mine/configmaps"},
		{"group list", "GET", "/apis/apps/v1/deployments", "/apis/apps/v1/namespaces/mine/deployments"},
		{"custom resource", "GET", "/apis/demo.racekit.dev/v1alpha1/webapps", "/apis/demo.racekit.dev/v1alpha1/namespaces/mine/webapps"},
		{"deprecated core watch", "GET", "/api/v1/watch/configmaps", "/api/v1/watch/namespaces/mine/configmaps"},
		{"deprecated group watch", "GET", "/apis/apps/v1/watch/deployments", "/apis/apps/v1/watch/namespaces/mine/deployments"},
		{"trailing slash", "GET", "/api/v1/configmaps/", "/api/v1/namespaces/mine/configmaps"},
		{"one object in another namespace", "GET", "/api/v1/namespaces/theirs/configmaps/c", ""},
		{"a list of another namespace", "GET", "/api/v1/namespaces/theirs/configmaps", ""},
		{"a list of the namespace", "GET", "/api/v1/namespaces/mine/configmaps", ""},
		{"cluster-scoped", "GET", "/api/v1/nodes", ""},
		{"namespaces", "GET", "/api/v1/namespaces", ""},
		{"a cluster-scoped group resource", "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles", ""},
		{"a resource discovery does not know", "GET", "/apis/example.com/v1/gadgets", ""},
		{"a write of every namespace", "DELETE", "/api/v1/configmaps", ""},
		{"a create", "POST", "/api/v1/configmaps", ""},
		{"discovery", "GET", "/apis/apps/v1", ""},
		{"discovery of the core group", "GET", "/api/v1", ""},
		{"not the API", "GET", "/version", ""},
		{"a watch of one namespace, deprecated form", "GET", "/api/v1/watch/namespaces/theirs/configmaps", ""},
		// An empty namespace is every namespace to the API server: the
		// Python and JavaScript clients send it for a namespace of "".
		{"empty namespace list", "GET", "/api/v1/namespaces//configmaps", "/api/v1/namespaces/mine/configmaps"},
		{"empty namespace group list", "GET", "/apis/apps/v1/namespaces//deployments", "/apis/apps/v1/namespaces/mine/deployments"},
		{"empty namespace, trailing slash", "GET", "/api/v1/namespaces//configmaps/", "/api/v1/namespaces/mine/configmaps"},
		{"empty namespace, deprecated watch", "GET", "/api/v1/watch/namespaces//configmaps", "/api/v1/watch/namespaces/mine/configmaps"},
		{"empty namespace, deprecated watch of one name", "GET", "/api/v1/watch/namespaces//configmaps/c", "/api/v1/watch/namespaces/mine/configmaps/c"},
		{"empty namespace, one object", "GET", "/api/v1/namespaces//configmaps/c", ""},
		{"empty namespace, a subresource", "GET", "/apis/apps/v1/namespaces//deployments/web/status", ""},
		{"empty namespace, deprecated watch of a subresource", "GET", "/api/v1/watch/namespaces//configmaps/c/status", ""},
		{"empty namespace, a Namespace's status", "GET", "/api/v1/namespaces//status", ""},
		{"empty namespace, a delete of the collection", "DELETE", "/api/v1/namespaces//configmaps", ""},
		{"two empty namespaces", "GET", "/api/v1/namespaces///configmaps", ""},
		{"an empty resource", "GET", "/api/v1//configmaps", ""},
		// The API server routes no path that begins with two slashes.
		{"leading double slash", "GET", "//api/v1/configmaps", ""},
		{"leading double slash, empty namespace", "GET", "//api/v1/namespaces//configmaps", ""},
		{"a deprecated watch of one name outside any namespace", "GET", "/api/v1/watch/configmaps/c", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := testConfinement.path(tc.method, tc.path)
			if tc.want == "" {
				assert.Assert(t, !ok, "rewritten to %s", got)
				assert.Equal(t, got, tc.path)
				return
			}
			assert.Assert(t, ok, "not rewritten")
			assert.Equal(t, got, tc.want)
		})
	}
	t.Run("no namespace confines nothing", func(t *testing.T) {
		_, ok := Confinement{Namespaced: namespacedForTest}.path("GET", "/api/v1/configmaps")
		assert.Assert(t, !ok)
	})
}

// TestConfinedProxy checks that the proxy sends a list and a watch of
// every namespace as ones of the confining namespace, query and all, and
// a read of one object in another namespace as it came.
func TestConfinedProxy(t *testing.T) {
	ch := make(chan seen, 1)
	r := newRigWith(t, recording(ch, `{"kind":"ConfigMapList","apiVersion":"v1","items":[]}`), Options{Confine: testConfinement}, "alice")
	c := r.client(t, true)
	for _, tc := range []struct{ path, query, want string }{
		{"/api/v1/configmaps", "limit=500&resourceVersion=0", "/api/v1/namespaces/mine/configmaps"},
		{"/api/v1/configmaps", "watch=true&allowWatchBookmarks=true", "/api/v1/namespaces/mine/configmaps"},
		{"/api/v1/namespaces/theirs/configmaps/c", "", "/api/v1/namespaces/theirs/configmaps/c"},
	} {
		uri := tc.path
		if tc.query != "" {
			uri += "?" + tc.query
		}
		resp, _ := r.get(t, c, uri, bearerHeader(r.token(t, "alice")))
		assert.Equal(t, resp.StatusCode, http.StatusOK)
		got := <-ch
		assert.Equal(t, got.Path, tc.want, "GET %s", uri)
		assert.Equal(t, got.Query, tc.query)
	}
}

// TestConfinementWrap checks the confinement of an in-process client: the
// request its transport carries is rewritten, and the one it was given is
// not changed.
func TestConfinementWrap(t *testing.T) {
	var sent []string
	rt := testConfinement.Wrap(roundtrip.Func(func(req *http.Request) (*http.Response, error) {
		sent = append(sent, req.URL.Path)
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	}))
	for _, p := range []string{"/apis/apps/v1/deployments", "/apis/apps/v1/namespaces/theirs/deployments/web"} {
		req, err := http.NewRequest(http.MethodGet, "https://apiserver"+p+"?watch=1", nil)
		assert.NilError(t, err)
		_, err = rt.RoundTrip(req)
		assert.NilError(t, err)
		assert.Equal(t, req.URL.Path, p, "the caller's request was changed")
	}
	assert.DeepEqual(t, sent, []string{"/apis/apps/v1/namespaces/mine/deployments", "/apis/apps/v1/namespaces/theirs/deployments/web"})
}
