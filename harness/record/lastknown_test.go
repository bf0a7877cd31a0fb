package record

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/internal/roundtrip"
)

// cm is a ConfigMap's JSON as the API server would answer with it.
func cm(rv string, extra string) string {
	return `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","namespace":"ns","resourceVersion":"` + rv + `"` + extra + `},"data":{"rv":"` + rv + `"}}`
}

const conflictStatus = `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","code":409}`

// step is one request through the recorder and the answer the fake
// transport gives it.
type step struct {
	method, path string
	code         int
	body         string
}

// send runs s through rec as actor bob.
func send(t *testing.T, rec *Recorder, s step) {
	t.Helper()
	rt := rec.Wrap("bob")(roundtrip.Func(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: s.code, Body: io.NopCloser(strings.NewReader(s.body)), Header: http.Header{}}, nil
	}))
	req, err := http.NewRequest(s.method, "https://apiserver"+s.path, strings.NewReader(`{"metadata":{"name":"c"}}`))
	assert.NilError(t, err)
	resp, err := rt.RoundTrip(req)
	assert.NilError(t, err)
	resp.Body.Close()
}

const c = "/api/v1/namespaces/ns/configmaps/c"

var cKey = Key{Resource: "configmaps", Namespace: "ns", Name: "c"}

// TestLastKnown checks when the trace may stand in for a GET: only when the
// last answer about the object is the object as stored, and nothing has
// touched it since. wantRV "" means the trace must not answer.
func TestLastKnown(t *testing.T) {
	tests := []struct {
		name   string
		steps  []step
		wantRV string
	}{
		{"create", []step{{"POST", "/api/v1/namespaces/ns/configmaps", 201, cm("1", "")}}, "1"}, // the name comes from the body
		{"get", []step{{"GET", c, 200, cm("1", "")}}, "1"},
		{"update after get", []step{{"GET", c, 200, cm("1", "")}, {"PUT", c, 200, cm("2", "")}}, "2"},
		{"patch", []step{{"PATCH", c, 200, cm("3", "")}}, "3"},
		{"conflict after get", []step{{"GET", c, 200, cm("1", "")}, {"PUT", c, 409, conflictStatus}}, ""},
		{"get after conflict", []step{{"PUT", c, 409, conflictStatus}, {"GET", c, 200, cm("4", "")}}, "4"},
		{"dry run", []step{{"GET", c, 200, cm("1", "")}, {"PATCH", c + "?dryRun=All", 200, cm("1", "")}}, ""},
		{"get from the watch cache", []step{{"PUT", c, 409, conflictStatus}, {"GET", c + "?resourceVersion=0", 200, cm("1", "")}}, ""},
		{"get from the watch cache keeps what was known", []step{{"PUT", c, 200, cm("5", "")}, {"GET", c + "?resourceVersion=0", 200, cm("4", "")}}, "5"},
		{"delete, gone at once", []step{{"GET", c, 200, cm("1", "")}, {"DELETE", c, 200, cm("1", "")}}, ""},
		{"delete", []step{{"GET", c, 200, cm("1", "")}, {"DELETE", c, 200, cm("2", `,"deletionTimestamp":"2026-11-29T10:00:00Z","finalizers":["x"]`)}}, ""},
		{"write while deleting", []step{{"PATCH", c, 200, cm("3", `,"deletionTimestamp":"2026-11-29T10:00:00Z"`)}}, ""},
		{"scale subresource", []step{{"GET", "/apis/apps/v1/namespaces/ns/deployments/c", 200, `{"kind":"Deployment","metadata":{"name":"c","resourceVersion":"1"}}`},
			{"PUT", "/apis/apps/v1/namespaces/ns/deployments/c/scale", 200, `{"kind":"Scale","metadata":{"name":"c","resourceVersion":"2"}}`}}, ""},
		{"status subresource", []step{{"PUT", c + "/status", 200, cm("6", "")}}, "6"},
		{"an answer that is not an object", []step{{"GET", c, 200, cm("1", "")}, {"PATCH", c, 200, "<html>"}}, ""},
		{"another object's answer", []step{{"GET", "/api/v1/namespaces/ns/configmaps/d", 200, cm("1", "")}}, ""},
		// a write to the collection: the verb deletecollection, in the
		// namespace or in all of them, or a write to the CRD of a resource
		{"deletecollection", []step{{"GET", c, 200, cm("1", "")}, {"DELETE", "/api/v1/namespaces/ns/configmaps", 200, `{"kind":"ConfigMapList","items":[]}`}}, ""},
		{"deletecollection, refused", []step{{"GET", c, 200, cm("1", "")}, {"DELETE", "/api/v1/namespaces/ns/configmaps", 403, `{"kind":"Status","reason":"Forbidden","code":403}`}}, ""},
		{"deletecollection of all namespaces", []step{{"GET", c, 200, cm("1", "")}, {"DELETE", "/api/v1/configmaps", 200, `{"kind":"ConfigMapList","items":[]}`}}, ""},
		{"deletecollection of another namespace", []step{{"GET", c, 200, cm("1", "")}, {"DELETE", "/api/v1/namespaces/other/configmaps", 200, `{"kind":"ConfigMapList","items":[]}`}}, "1"},
		{"deletecollection of another resource", []step{{"GET", c, 200, cm("1", "")}, {"DELETE", "/api/v1/namespaces/ns/secrets", 200, `{"kind":"SecretList","items":[]}`}}, "1"},
		{"deletecollection of another group's resource", []step{{"GET", c, 200, cm("1", "")}, {"DELETE", "/apis/other.example/v1/namespaces/ns/configmaps", 200, `{"kind":"ConfigMapList","items":[]}`}}, "1"},
		{"get after deletecollection", []step{{"DELETE", "/api/v1/namespaces/ns/configmaps", 200, `{"kind":"ConfigMapList","items":[]}`}, {"GET", c, 200, cm("7", "")}}, "7"},
		{"a list of one name is no write", []step{{"GET", c, 200, cm("1", "")}, {"GET", "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dc", 200, `{"kind":"ConfigMapList","items":[]}`}}, "1"},
		{"a CRD's write", []step{{"GET", "/apis/demo.racekit.dev/v1alpha1/namespaces/ns/webapps/c", 200, cm("1", "")},
			{"PUT", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/webapps.demo.racekit.dev", 200, `{"kind":"CustomResourceDefinition","metadata":{"name":"webapps.demo.racekit.dev","resourceVersion":"2"}}`}}, ""},
		{"a CRD's read", []step{{"GET", "/apis/demo.racekit.dev/v1alpha1/namespaces/ns/webapps/c", 200, cm("1", "")},
			{"GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/webapps.demo.racekit.dev", 200, `{"kind":"CustomResourceDefinition","metadata":{"name":"webapps.demo.racekit.dev","resourceVersion":"2"}}`}}, "1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &Recorder{}
			for _, s := range tc.steps {
				send(t, rec, s)
			}
			key := cKey
			if strings.Contains(tc.name, "scale") {
				key = Key{Group: "apps", Resource: "deployments", Namespace: "ns", Name: "c"}
			}
			if strings.Contains(tc.name, "CRD") {
				key = Key{Group: "demo.racekit.dev", Resource: "webapps", Namespace: "ns", Name: "c"}
			}
			obj, ok := rec.LastKnown(key)
			if tc.wantRV == "" {
				assert.Assert(t, !ok, "the trace answered: %v", obj)
				return
			}
			assert.Assert(t, ok, "the trace did not answer")
			assert.Equal(t, obj.GetResourceVersion(), tc.wantRV)
		})
	}
}

// TestLastKnownOverlap checks that an answer does not count when another
// exchange about the object overlapped it: the server may have served the
// two in either order. Here a GET is sent while a PUT is in flight and
// answers last, with what the server may have read before the PUT.
func TestLastKnownOverlap(t *testing.T) {
	rec := &Recorder{}
	blocked := func(rv string) (http.RoundTripper, chan struct{}, chan struct{}) {
		sent, release := make(chan struct{}), make(chan struct{})
		return rec.Wrap("bob")(roundtrip.Func(func(*http.Request) (*http.Response, error) {
			close(sent)
			<-release
			return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(cm(rv, ""))), Header: http.Header{}}, nil
		})), sent, release
	}
	do := func(wg *sync.WaitGroup, rt http.RoundTripper, method string) {
		wg.Go(func() {
			req, _ := http.NewRequest(method, "https://apiserver"+c, strings.NewReader(`{"metadata":{"name":"c"}}`))
			if resp, err := rt.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	send(t, rec, step{"GET", c, 200, cm("1", "")})
	put, putSent, putRelease := blocked("2")
	get, getSent, getRelease := blocked("1")
	var putDone, getDone sync.WaitGroup
	do(&putDone, put, "PUT")
	<-putSent
	_, ok := rec.LastKnown(cKey)
	assert.Assert(t, !ok, "known while a write is in flight")
	do(&getDone, get, "GET")
	<-getSent
	close(putRelease)
	putDone.Wait()
	close(getRelease)
	getDone.Wait()
	obj, ok := rec.LastKnown(cKey)
	assert.Assert(t, !ok, "known after two overlapping exchanges: %v", obj)

	send(t, rec, step{"GET", c, 200, cm("3", "")})
	obj, ok = rec.LastKnown(cKey)
	assert.Assert(t, ok, "a GET on its own must make it known again")
	assert.Equal(t, obj.GetResourceVersion(), "3")
}

// TestLastKnownCollectionOverlap checks that a GET that crosses a write to
// its object's collection does not count: sent while a deletecollection is
// in flight and answered after it, it may show the object before or after
// the sweep. What the deletecollection answered with is gone.
func TestLastKnownCollectionOverlap(t *testing.T) {
	rec := &Recorder{}
	const list = `{"kind":"ConfigMapList","items":[` + `{"metadata":{"name":"c","namespace":"ns","resourceVersion":"1"}}]}`
	sent, release := make(chan struct{}), make(chan struct{})
	sweep := rec.Wrap("alice")(roundtrip.Func(func(*http.Request) (*http.Response, error) {
		close(sent)
		<-release
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(list)), Header: http.Header{}}, nil
	}))
	var done sync.WaitGroup
	done.Go(func() {
		req, _ := http.NewRequest("DELETE", "https://apiserver/api/v1/namespaces/ns/configmaps", nil)
		if resp, err := sweep.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	})
	<-sent
	send(t, rec, step{"GET", c, 200, cm("1", "")})
	obj, ok := rec.LastKnown(cKey)
	assert.Assert(t, !ok, "known while a deletecollection is in flight: %v", obj)
	close(release)
	done.Wait()
	obj, ok = rec.LastKnown(cKey)
	assert.Assert(t, !ok, "known after a GET that crossed a deletecollection: %v", obj)
	assert.DeepEqual(t, rec.Written()[cKey], Version{Gone: true}, cmp.AllowUnexported(Version{}))
}
