package hooks

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
)

// TestParseRequest checks that a call to the API server is read as
// kube-apiserver's RequestInfoFactory reads it, on the URLs real clients
// send: client-go and controller-runtime (watch=true, resourceVersion,
// allowWatchBookmarks, timeoutSeconds), the official Python client
// (watch=True), kubectl (its /version, discovery and fieldSelector
// metadata.name for kubectl get NAME --watch), and the deprecated /watch/
// paths.
func TestParseRequest(t *testing.T) {
	tests := []struct {
		method, target string
		want           Call
	}{
		// client-go, controller-runtime
		{"GET", "/apis/apps/v1/namespaces/ns/deployments/web", Call{Actor: "a", Verb: "get", Resource: "deployments", Namespace: "ns", Name: "web"}},
		{"HEAD", "/apis/apps/v1/namespaces/ns/deployments/web", Call{Actor: "a", Verb: "get", Resource: "deployments", Namespace: "ns", Name: "web"}},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments", Call{Actor: "a", Verb: "list", Resource: "deployments", Namespace: "ns"}},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments?limit=500&resourceVersion=0", Call{Actor: "a", Verb: "list", Resource: "deployments", Namespace: "ns"}},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments?watch=true", Call{Actor: "a", Verb: "watch", Resource: "deployments", Namespace: "ns"}},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments?allowWatchBookmarks=true&resourceVersion=42&timeoutSeconds=417&watch=true", Call{Actor: "a", Verb: "watch", Resource: "deployments", Namespace: "ns"}},
		{"GET", "/apis/apps/v1/deployments?watch=1", Call{Actor: "a", Verb: "watch", Resource: "deployments"}},
		{"POST", "/apis/apps/v1/namespaces/ns/deployments", Call{Actor: "a", Verb: "create", Resource: "deployments", Namespace: "ns"}},
		{"PUT", "/apis/demo.racekit.dev/v1alpha1/namespaces/ns/webapps/web/status", Call{Actor: "a", Verb: "update", Resource: "webapps", Namespace: "ns", Name: "web", Subresource: "status"}},
		{"PATCH", "/api/v1/namespaces/ns/configmaps/c", Call{Actor: "a", Verb: "patch", Resource: "configmaps", Namespace: "ns", Name: "c"}},
		{"DELETE", "/api/v1/namespaces/ns/configmaps/c", Call{Actor: "a", Verb: "delete", Resource: "configmaps", Namespace: "ns", Name: "c"}},
		{"DELETE", "/api/v1/namespaces/ns/configmaps", Call{Actor: "a", Verb: "deletecollection", Resource: "configmaps", Namespace: "ns"}},
		{"DELETE", "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dc", Call{Actor: "a", Verb: "deletecollection", Resource: "configmaps", Namespace: "ns"}},
		{"GET", "/api/v1/namespaces/ns", Call{Actor: "a", Verb: "get", Resource: "namespaces", Name: "ns"}},
		{"PUT", "/api/v1/namespaces/ns/finalize", Call{Actor: "a", Verb: "update", Resource: "namespaces", Name: "ns", Subresource: "finalize"}},
		{"PUT", "/api/v1/namespaces/ns/status", Call{Actor: "a", Verb: "update", Resource: "namespaces", Name: "ns", Subresource: "status"}},
		{"GET", "/api/v1/namespaces", Call{Actor: "a", Verb: "list", Resource: "namespaces"}},
		{"GET", "/api/v1/nodes", Call{Actor: "a", Verb: "list", Resource: "nodes"}},
		{"GET", "/api/v1/namespaces/ns/pods/p/log/extra", Call{Actor: "a", Verb: "get", Resource: "pods", Namespace: "ns", Name: "p", Subresource: "log"}},
		// the Python client (kubernetes.watch.Watch) writes Python's True
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=True", Call{Actor: "a", Verb: "watch", Resource: "configmaps", Namespace: "ns"}},
		{"GET", "/api/v1/namespaces/ns/configmaps?resourceVersion=7&watch=True&timeoutSeconds=5", Call{Actor: "a", Verb: "watch", Resource: "configmaps", Namespace: "ns"}},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=yes", Call{Actor: "a", Verb: "watch", Resource: "configmaps", Namespace: "ns"}},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=False", Call{Actor: "a", Verb: "list", Resource: "configmaps", Namespace: "ns"}},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=0", Call{Actor: "a", Verb: "list", Resource: "configmaps", Namespace: "ns"}},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=FALSE&watch=true", Call{Actor: "a", Verb: "list", Resource: "configmaps", Namespace: "ns"}},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=", Call{Actor: "a", Verb: "watch", Resource: "configmaps", Namespace: "ns"}},
		// a query the codec refuses: the watch flag is still read
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=true&limit=x", Call{Actor: "a", Verb: "watch", Resource: "configmaps", Namespace: "ns"}},
		{"GET", "/api/v1/namespaces/ns/configmaps?limit=x", Call{Actor: "a", Verb: "list", Resource: "configmaps", Namespace: "ns"}},
		// a named watch is a GET of the object: the API server ignores
		// watch there
		{"GET", "/api/v1/namespaces/ns/configmaps/c?watch=true", Call{Actor: "a", Verb: "get", Resource: "configmaps", Namespace: "ns", Name: "c"}},
		// kubectl get configmaps c --watch: a watch of one name
		{"GET", "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dc&resourceVersion=7&watch=true", Call{Actor: "a", Verb: "watch", Resource: "configmaps", Namespace: "ns", Name: "c"}},
		{"GET", "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dc", Call{Actor: "a", Verb: "list", Resource: "configmaps", Namespace: "ns", Name: "c"}},
		{"GET", "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dc%2Cmetadata.namespace%3Dns", Call{Actor: "a", Verb: "list", Resource: "configmaps", Namespace: "ns", Name: "c"}},
		{"GET", "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%21%3Dc", Call{Actor: "a", Verb: "list", Resource: "configmaps", Namespace: "ns"}},
		{"GET", "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Da%2Fb", Call{Actor: "a", Verb: "list", Resource: "configmaps", Namespace: "ns"}},
		// the deprecated /watch/ paths
		{"GET", "/api/v1/watch/namespaces/ns/configmaps", Call{Actor: "a", Verb: "watch", Resource: "configmaps", Namespace: "ns"}},
		{"GET", "/api/v1/watch/namespaces/ns/configmaps/c", Call{Actor: "a", Verb: "watch", Resource: "configmaps", Namespace: "ns", Name: "c"}},
		{"GET", "/apis/apps/v1/watch/deployments", Call{Actor: "a", Verb: "watch", Resource: "deployments"}},
		// non-resource requests: kubectl's /version, discovery, health
		{"GET", "/version", Call{Actor: "a", Verb: "get", Path: "/version"}},
		{"GET", "/version?timeout=32s", Call{Actor: "a", Verb: "get", Path: "/version"}},
		{"GET", "/api", Call{Actor: "a", Verb: "get", Path: "/api"}},
		{"GET", "/api/v1", Call{Actor: "a", Verb: "get", Path: "/api/v1"}},
		{"GET", "/apis", Call{Actor: "a", Verb: "get", Path: "/apis"}},
		{"GET", "/apis/apps", Call{Actor: "a", Verb: "get", Path: "/apis/apps"}},
		{"GET", "/apis/apps/v1", Call{Actor: "a", Verb: "get", Path: "/apis/apps/v1"}},
		{"GET", "/openapi/v3/apis/apps/v1", Call{Actor: "a", Verb: "get", Path: "/openapi/v3/apis/apps/v1"}},
		{"GET", "/healthz", Call{Actor: "a", Verb: "get", Path: "/healthz"}},
		{"GET", "/", Call{Actor: "a", Verb: "get", Path: "/"}},
		{"POST", "/registrations/ns/web", Call{Actor: "a", Verb: "post", Path: "/registrations/ns/web"}},
		{"GET", "/api/v1/watch", Call{Actor: "a", Verb: "get", Path: "/api/v1/watch"}},
		// An empty namespace segment, which the Python and JavaScript
		// clients send for a namespace of "" (every namespace), is kept
		// as the API server keeps it: a namespace of "" is every
		// namespace, never a segment to skip.
		{"GET", "/api/v1/namespaces//configmaps", Call{Actor: "a", Verb: "list", Resource: "configmaps"}},
		{"GET", "/api/v1/namespaces//configmaps?watch=true", Call{Actor: "a", Verb: "watch", Resource: "configmaps"}},
		{"GET", "/api/v1/watch/namespaces//configmaps", Call{Actor: "a", Verb: "watch", Resource: "configmaps"}},
		{"GET", "/api/v1/watch/namespaces//configmaps/c", Call{Actor: "a", Verb: "watch", Resource: "configmaps", Name: "c"}},
		{"DELETE", "/api/v1/namespaces//configmaps", Call{Actor: "a", Verb: "deletecollection", Resource: "configmaps"}},
		{"GET", "/api/v1/namespaces//configmaps/c", Call{Actor: "a", Verb: "get", Resource: "configmaps", Name: "c"}},
		{"GET", "/apis/apps/v1/namespaces//deployments/web/status", Call{Actor: "a", Verb: "get", Resource: "deployments", Name: "web", Subresource: "status"}},
		{"GET", "/api/v1/namespaces//status", Call{Actor: "a", Verb: "list", Resource: "namespaces", Subresource: "status"}},
		// Empty segments elsewhere are kept too, and shift what follows;
		// slashes at either end are not segments.
		{"GET", "/api/v1//configmaps", Call{Actor: "a", Verb: "get", Name: "configmaps"}},
		{"GET", "/api/v1/namespaces/ns//c", Call{Actor: "a", Verb: "get", Namespace: "ns", Name: "c"}},
		{"GET", "/api/v1/namespaces/ns/configmaps//c", Call{Actor: "a", Verb: "list", Resource: "configmaps", Namespace: "ns", Subresource: "c"}},
		{"GET", "/apis/apps//v1/deployments", Call{Actor: "a", Verb: "get", Resource: "v1", Name: "deployments"}},
		{"GET", "/api/v1/namespaces/ns/configmaps/", Call{Actor: "a", Verb: "list", Resource: "configmaps", Namespace: "ns"}},
		{"GET", "//api/v1/namespaces/ns/configmaps//", Call{Actor: "a", Verb: "list", Resource: "configmaps", Namespace: "ns"}},
		{"GET", "/api/v1//", Call{Actor: "a", Verb: "get", Path: "/api/v1//"}},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			got := ParseRequest("a", httptest.NewRequest(tc.method, tc.target, nil))
			assert.DeepEqual(t, got, tc.want)
		})
	}
}

// TestParseServiceRequest checks how a call to a service outside the API
// server, such as the reference controller's registry, is read:
// /RESOURCE[/NAME] or /RESOURCE/NAMESPACE/NAME.
func TestParseServiceRequest(t *testing.T) {
	tests := []struct {
		method, target string
		want           Call
	}{
		{"POST", "/registrations/ns/web", Call{Actor: "a", Verb: "create", Resource: "registrations", Namespace: "ns", Name: "web"}},
		{"DELETE", "/registrations/ns/web", Call{Actor: "a", Verb: "delete", Resource: "registrations", Namespace: "ns", Name: "web"}},
		{"GET", "/registrations/web", Call{Actor: "a", Verb: "get", Resource: "registrations", Name: "web"}},
		{"GET", "/stats", Call{Actor: "a", Verb: "list", Resource: "stats"}},
		{"GET", "/stats?watch=true", Call{Actor: "a", Verb: "watch", Resource: "stats"}},
		{"PUT", "/a/b/c/d", Call{Actor: "a", Verb: "update", Resource: "a", Namespace: "b", Name: "c/d"}},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			got := ParseServiceRequest("a", httptest.NewRequest(tc.method, tc.target, nil))
			assert.DeepEqual(t, got, tc.want)
		})
	}
}

// TestCallObject checks how a call names its target in traces and hooks:
// a non-resource request by its path.
func TestCallObject(t *testing.T) {
	tests := []struct {
		call Call
		want string
	}{
		{Call{Verb: "get", Resource: "deployments", Name: "web"}, "deployments/web"},
		{Call{Verb: "list", Resource: "deployments"}, "deployments"},
		{Call{Verb: "update", Resource: "webapps", Name: "web", Subresource: "status"}, "webapps/web/status"},
		{Call{Verb: "get", Path: "/version"}, "/version"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.call.Object(), tc.want)
	}
}

// TestParseRequestCreateName checks that a create, sent to the collection,
// is named after the object in its body.
func TestParseRequestCreateName(t *testing.T) {
	req, err := http.NewRequest("POST", "http://x/apis/apps/v1/namespaces/ns/deployments", strings.NewReader(`{"metadata":{"name":"web"}}`))
	assert.NilError(t, err)
	got := ParseRequest("a", req)
	assert.Equal(t, got.Object(), "deployments/web")
	body, err := io.ReadAll(req.Body)
	assert.NilError(t, err)
	assert.Equal(t, string(body), `{"metadata":{"name":"web"}}`, "the body must still be there to send")
}

func TestMatcher(t *testing.T) {
	call := Call{Actor: "controller", Verb: "get", Resource: "deployments", Namespace: "ns", Name: "web"}
	tests := []struct {
		m    Matcher
		want bool
	}{
		{Matcher{}, true},
		{Matcher{Actor: "controller", Verb: "get", Resource: "deployments", Name: "web"}, true},
		{Matcher{Actor: "bob"}, false},
		{Matcher{Verb: "update"}, false},
		{Matcher{Resource: "webapps"}, false},
		{Matcher{Resource: "deployments", Name: "other"}, false},
		{Matcher{Resource: "deployments", Subresource: "status"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.m.String(), func(t *testing.T) {
			assert.Equal(t, tc.m.Matches(call), tc.want)
		})
	}
}

// TestMatcherNamespace checks that a matcher with a namespace selects the
// calls in it and those that name none, and no call in another namespace:
// another scenario's object of the same name.
func TestMatcherNamespace(t *testing.T) {
	m := Matcher{Verb: "update", Resource: "configmaps", Name: "c", Namespace: "mine"}
	tests := []struct {
		name string
		call Call
		want bool
	}{
		{"in its namespace", Call{Verb: "update", Resource: "configmaps", Namespace: "mine", Name: "c"}, true},
		{"in another namespace", Call{Verb: "update", Resource: "configmaps", Namespace: "theirs", Name: "c"}, false},
		{"cluster-scoped, or every namespace", Call{Verb: "update", Resource: "configmaps", Name: "c"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, m.Matches(tc.call), tc.want)
		})
	}
	anywhere := m
	anywhere.Namespace = ""
	assert.Assert(t, anywhere.Matches(tests[1].call), "a matcher without a namespace matches every namespace")
	assert.Equal(t, m.String(), "* update configmaps/c", "String shows no namespace: traces name hooks as scenarios write them")
}

func TestSetOccurrence(t *testing.T) {
	get := Call{Actor: "controller", Verb: "get", Resource: "deployments", Name: "web"}
	other := Call{Actor: "bob", Verb: "get", Resource: "deployments", Name: "web"}
	tests := []struct {
		name       string
		occurrence int
		calls      []Call
		wantRuns   []int // the 1-based index of matching calls on which the action ran
	}{
		{"first", 1, []Call{get, get, get}, []int{1}},
		{"second", 2, []Call{get, other, get, get}, []int{2}},
		{"every", Every, []Call{get, other, get}, []int{1, 2}},
		{"never reached", 3, []Call{get, get}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s Set
			var runs []int
			n := 0
			a := s.Arm(Hook{Point: After, Match: Matcher{Actor: "controller", Verb: "get"}, Occurrence: tc.occurrence,
				Action: func(Event) error { runs = append(runs, n); return nil }})
			for _, c := range tc.calls {
				if a.Match.Matches(c) {
					n++
				}
				s.Fire(Event{Point: Before, Call: c}) // wrong point: never counts
				s.Fire(Event{Point: After, Call: c})
			}
			assert.DeepEqual(t, runs, tc.wantRuns)
			assert.Equal(t, s.Fired(a), len(tc.wantRuns))
		})
	}
}

func TestSetOrderAndErrors(t *testing.T) {
	var s Set
	var order []string
	var fired []int
	s.OnFire = func(a *Armed, _ Event) { fired = append(fired, a.ID) }
	m := Matcher{Verb: "update"}
	first := s.Arm(Hook{Point: Before, Match: m, Occurrence: 1, Label: "first", Action: func(Event) error {
		order = append(order, "first")
		return errTest
	}})
	s.Arm(Hook{Point: Before, Match: m, Occurrence: 1, Label: "second", Action: func(Event) error {
		order = append(order, "second")
		return nil
	}})
	s.Fire(Event{Point: Before, Call: Call{Verb: "update"}})
	if diff := cmp.Diff([]string{"first", "second"}, order); diff != "" {
		t.Fatalf("actions ran out of arming order (-want +got):\n%s", diff)
	}
	assert.DeepEqual(t, fired, []int{1, 2})
	assert.ErrorIs(t, s.Err(first), errTest)
	assert.ErrorContains(t, s.Err(first), "first: boom")
}

type testError string

func (e testError) Error() string { return string(e) }

const errTest = testError("boom")

func TestSetActionTimeoutAndPanic(t *testing.T) {
	s := Set{Timeout: 50 * time.Millisecond}
	block := make(chan struct{})
	defer close(block)
	stuck := s.Arm(Hook{Point: Before, Match: Matcher{Verb: "get"}, Occurrence: 1, Label: "stuck",
		Action: func(Event) error { <-block; return nil }})
	panics := s.Arm(Hook{Point: Before, Match: Matcher{Verb: "get"}, Occurrence: 1, Label: "panics",
		Action: func(Event) error { panic("boom") }})
	s.Fire(Event{Point: Before, Call: Call{Actor: "controller", Verb: "get", Resource: "deployments", Name: "web"}})
	assert.ErrorIs(t, s.Err(stuck), ErrActionTimeout)
	assert.ErrorContains(t, s.Err(stuck), "stuck: hook action did not finish within 50ms; the controller get deployments/web call went on without it")
	assert.ErrorContains(t, s.Err(panics), "panics: panic: boom")
}

// TestSetNoRecursion checks that a hook's own action does not fire it again,
// even with occurrence every: otherwise the action would recurse forever.
func TestSetNoRecursion(t *testing.T) {
	var s Set
	get := Call{Actor: "bob", Verb: "get", Resource: "deployments", Name: "web"}
	runs := 0
	a := s.Arm(Hook{Point: After, Match: Matcher{Verb: "get"}, Occurrence: Every, Action: func(Event) error {
		runs++
		s.Fire(Event{Point: After, Call: get}) // the action's own call
		return nil
	}})
	s.Fire(Event{Point: After, Call: get})
	s.Fire(Event{Point: After, Call: get})
	assert.Equal(t, runs, 2)
	assert.Equal(t, s.Fired(a), 2)
}
