package hooks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
)

// TestParsedOnce checks that the transports on one request's way share
// one parse: the first parses and puts the Call in the request's context,
// and a transport further on reads it there, taking the request as it came
// (the same *http.Request), as actor's; a request that is not the one
// parsed (a clone, a rewritten query, another request made with its
// context) is parsed again, and a service's parse is not an API server's.
func TestParsedOnce(t *testing.T) {
	orig := httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps/c", nil)
	first, call := Parsed("alice", orig)
	assert.Assert(t, first != orig, "the first parse keeps no Call for the transports further on")
	assert.DeepEqual(t, call, ParseRequest("alice", orig))

	again, call := Parsed("bob", first)
	assert.Assert(t, again == first, "a transport further on parsed the request again")
	assert.DeepEqual(t, call, ParseRequest("bob", orig))

	shallow := first.WithContext(context.WithValue(first.Context(), struct{ k int }{1}, 1))
	got, _ := Parsed("alice", shallow)
	assert.Assert(t, got == shallow, "a shallow copy of the request (crashCheck's WithContext) was parsed again")

	tests := []struct {
		name string
		req  func() *http.Request
	}{
		{"a clone", func() *http.Request { return first.Clone(first.Context()) }},
		{"a query rewritten in place", func() *http.Request {
			r := first.WithContext(first.Context())
			u := *r.URL
			r.URL = &u
			r.URL.RawQuery = "watch=true"
			return r
		}},
		{"another request with its context", func() *http.Request {
			r, err := http.NewRequestWithContext(first.Context(), "GET", "/api/v1/namespaces/ns/secrets/s", nil)
			assert.NilError(t, err)
			return r
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.req()
			got, call := Parsed("alice", r)
			assert.Assert(t, got != r, "the request was not parsed again")
			assert.DeepEqual(t, call, ParseRequest("alice", r))
		})
	}

	svc := httptest.NewRequest("GET", "/images/ns/web", nil)
	api, _ := Parsed("alice", svc)
	got, call = ParsedService("alice", api)
	assert.Assert(t, got != api, "a service's call was read as the API server's parse")
	assert.DeepEqual(t, call, ParseServiceRequest("alice", svc))
}

// TestParsedIsParse drives requests through generated chains of what a
// transport may do to the request it passes on (a shallow copy, a clone,
// a query or path rewritten, a new request made with its context, a
// create of another name with the same URL) and checks at every step that
// the Call Parsed gives is the one ParseRequest derives from the request
// as it is: sharing the parse never changes what a transport sees.
func TestParsedIsParse(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 6))
	paths := []string{"/api/v1/namespaces/ns/configmaps", "/api/v1/namespaces/ns/configmaps/c", "/apis/apps/v1/namespaces/ns/deployments/web/status", "/version"}
	queries := []string{"", "watch=true", "fieldSelector=metadata.name%3Dc", "resourceVersion=7&resourceVersionMatch=Exact"}
	methods := []string{"GET", "POST", "PUT", "DELETE"}
	create := func(ctx context.Context, path, name string) *http.Request {
		body := fmt.Sprintf(`{"metadata":{"name":%q}}`, name)
		req, err := http.NewRequestWithContext(ctx, "POST", path, bytes.NewReader([]byte(body)))
		assert.NilError(t, err)
		return req
	}
	steps := []struct {
		name string
		do   func(*http.Request) *http.Request
	}{
		{"shallow copy", func(req *http.Request) *http.Request { return req.WithContext(req.Context()) }},
		{"clone", func(req *http.Request) *http.Request { return req.Clone(req.Context()) }},
		{"rewrite the query", func(req *http.Request) *http.Request {
			out := req.Clone(req.Context())
			out.URL.RawQuery = queries[r.IntN(len(queries))]
			return out
		}},
		{"rewrite the query in place", func(req *http.Request) *http.Request {
			req.URL.RawQuery = queries[r.IntN(len(queries))]
			return req
		}},
		{"another request with its context", func(req *http.Request) *http.Request {
			out, err := http.NewRequestWithContext(req.Context(), methods[r.IntN(len(methods))], paths[r.IntN(len(paths))], nil)
			assert.NilError(t, err)
			return out
		}},
		{"a create of another name with its context", func(req *http.Request) *http.Request {
			return create(req.Context(), paths[0], fmt.Sprintf("n%d", r.IntN(3)))
		}},
	}
	used := map[string]int{}
	for range 300 {
		req := create(context.Background(), paths[0], "first")
		if r.IntN(2) == 0 {
			req = httptest.NewRequest(methods[r.IntN(len(methods))], paths[r.IntN(len(paths))]+"?"+queries[r.IntN(len(queries))], io.NopCloser(bytes.NewReader(nil)))
		}
		var did []string
		for range 1 + r.IntN(6) {
			var call Call
			req, call = Parsed("a", req)
			if diff := cmp.Diff(ParseRequest("a", req), call); diff != "" {
				t.Fatalf("after %v, Parsed is not ParseRequest (-parse +Parsed):\n%s", did, diff)
			}
			s := steps[r.IntN(len(steps))]
			req = s.do(req)
			did = append(did, s.name)
			used[s.name]++
		}
	}
	for _, s := range steps {
		assert.Assert(t, used[s.name] > 0, "no chain took the step %q", s.name)
	}
}
