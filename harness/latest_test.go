package harness

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
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
	rt := rec.Wrap("bob")(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: s.code, Body: io.NopCloser(strings.NewReader(s.body)), Header: http.Header{}}, nil
	}))
	req, err := http.NewRequest(s.method, "https://apiserver"+s.path, strings.NewReader(`{"metadata":{"name":"c"}}`))
	assert.NilError(t, err)
	resp, err := rt.RoundTrip(req)
	assert.NilError(t, err)
	resp.Body.Close()
}

const c = "/api/v1/namespaces/ns/configmaps/c"

var cKey = objectKey{resource: "configmaps", namespace: "ns", name: "c"}

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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &Recorder{}
			for _, s := range tc.steps {
				send(t, rec, s)
			}
			key := cKey
			if strings.Contains(tc.name, "scale") {
				key = objectKey{group: "apps", resource: "deployments", namespace: "ns", name: "c"}
			}
			obj, ok := rec.lastKnown(key)
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
		return rec.Wrap("bob")(roundTripFunc(func(*http.Request) (*http.Response, error) {
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
	_, ok := rec.lastKnown(cKey)
	assert.Assert(t, !ok, "known while a write is in flight")
	do(&getDone, get, "GET")
	<-getSent
	close(putRelease)
	putDone.Wait()
	close(getRelease)
	getDone.Wait()
	obj, ok := rec.lastKnown(cKey)
	assert.Assert(t, !ok, "known after two overlapping exchanges: %v", obj)

	send(t, rec, step{"GET", c, 200, cm("3", "")})
	obj, ok = rec.lastKnown(cKey)
	assert.Assert(t, ok, "a GET on its own must make it known again")
	assert.Equal(t, obj.GetResourceVersion(), "3")
}
