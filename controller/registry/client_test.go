package registry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/controller/registry"
)

// TestClient checks each outcome of the client against a real server on
// loopback: the records it returns and the errors it maps.
func TestClient(t *testing.T) {
	ctx := context.Background()
	srv := registry.NewServer()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	c := registry.NewClient(hs.URL+"/", hs.Client()) // a trailing slash is fine

	first, err := c.Register(ctx, "ns", "web", "u1")
	assert.NilError(t, err)
	assert.DeepEqual(t, first, registry.Record{ID: "reg-1", UID: "u1", Name: "ns/web"})

	tests := []struct {
		name    string
		call    func() (registry.Record, error)
		want    registry.Record
		wantErr error
	}{
		{"register again", func() (registry.Record, error) { return c.Register(ctx, "ns", "web", "u1") }, first, nil},
		{"register taken", func() (registry.Record, error) { return c.Register(ctx, "ns", "web", "u2") }, registry.Record{}, registry.ErrTaken},
		{"lookup", func() (registry.Record, error) { return c.Lookup(ctx, "ns", "web") }, first, nil},
		{"lookup missing", func() (registry.Record, error) { return c.Lookup(ctx, "ns", "nope") }, registry.Record{}, registry.ErrNotFound},
		{"deregister taken", func() (registry.Record, error) { return registry.Record{}, c.Deregister(ctx, "ns", "web", "u2") }, registry.Record{}, registry.ErrTaken},
		{"deregister missing", func() (registry.Record, error) { return registry.Record{}, c.Deregister(ctx, "ns", "nope", "u1") }, registry.Record{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.call()
			if tc.wantErr == nil {
				assert.NilError(t, err)
			} else {
				assert.Assert(t, errors.Is(err, tc.wantErr), "got error %v, want %v", err, tc.wantErr)
			}
			assert.DeepEqual(t, got, tc.want)
		})
	}
	assert.Equal(t, srv.Creates(), 1, "only the first register creates")

	assert.NilError(t, c.Deregister(ctx, "ns", "web", "u1"))
	_, err = c.Lookup(ctx, "ns", "web")
	assert.Assert(t, errors.Is(err, registry.ErrNotFound), "after deregister: %v", err)
}

// TestClientUnexpectedStatus checks that an answer the protocol does not
// have becomes a StatusError, not ErrTaken or ErrNotFound.
func TestClientUnexpectedStatus(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	defer hs.Close()
	_, err := registry.NewClient(hs.URL, hs.Client()).Register(context.Background(), "ns", "web", "u1")
	var se *registry.StatusError
	assert.Assert(t, errors.As(err, &se), "got %v", err)
	assert.Equal(t, se.Code, http.StatusServiceUnavailable)
	assert.Equal(t, se.Message, "overloaded")
	assert.Equal(t, err.Error(), "register ns/web: registry answered 503 Service Unavailable: overloaded")
}
