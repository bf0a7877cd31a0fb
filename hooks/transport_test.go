package hooks

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"gotest.tools/v3/assert"
)

// TestTransportOrder checks that hook actions run synchronously: a Before
// action runs before the server sees the request, an After action after the
// server answered and before the caller reads the body, which it still can.
func TestTransportOrder(t *testing.T) {
	var log []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log = append(log, "server "+r.Method)
		io.WriteString(w, `{"metadata":{"resourceVersion":"7"}}`)
	}))
	defer srv.Close()

	var s Set
	s.Arm(Hook{Point: Before, Match: Matcher{Verb: "update"}, Occurrence: 1, Action: func(e Event) error {
		log = append(log, "before "+e.Call.String())
		return nil
	}})
	s.Arm(Hook{Point: After, Match: Matcher{Verb: "update"}, Occurrence: 1, Action: func(e Event) error {
		log = append(log, "after "+string(e.Body))
		return nil
	}})
	c := &http.Client{Transport: &Transport{Actor: "controller", Hooks: &s, Next: http.DefaultTransport}}
	req, err := http.NewRequest(http.MethodPut, srv.URL+"/apis/apps/v1/namespaces/ns/deployments/web", nil)
	assert.NilError(t, err)
	resp, err := c.Do(req)
	assert.NilError(t, err)
	body, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	resp.Body.Close()
	log = append(log, "caller "+string(body))

	assert.DeepEqual(t, log, []string{
		"before controller update deployments/web",
		"server PUT",
		`after {"metadata":{"resourceVersion":"7"}}`,
		`caller {"metadata":{"resourceVersion":"7"}}`,
	})
}

// TestTransportAbort checks what an action's Abort does to the calls of
// its context: at Before the call is not sent, at After its answer is
// lost, and every later call fails unsent; a call of another context is
// not touched.
func TestTransportAbort(t *testing.T) {
	for _, point := range []Point{Before, After} {
		t.Run(point.Name, func(t *testing.T) {
			var served []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				served = append(served, r.Method+" "+r.URL.Path)
				io.WriteString(w, `{}`)
			}))
			defer srv.Close()
			crash := errors.New("crashed")
			var s Set
			s.Arm(Hook{Point: point, Match: Matcher{Verb: "update"}, Occurrence: 1, Action: func(e Event) error {
				AbortOf(e.Context).Set(crash)
				return nil
			}})
			c := &http.Client{Transport: &Transport{Actor: "controller", Hooks: &s, Next: http.DefaultTransport}}
			ctx, _ := WithAbort(context.Background())
			do := func(ctx context.Context, method string) error {
				req, err := http.NewRequestWithContext(ctx, method, srv.URL+"/apis/apps/v1/namespaces/ns/deployments/web", nil)
				assert.NilError(t, err)
				resp, err := c.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				return err
			}
			assert.NilError(t, do(ctx, http.MethodGet))
			assert.ErrorIs(t, do(ctx, http.MethodPut), crash)
			assert.ErrorIs(t, do(ctx, http.MethodGet), crash, "a later call of the aborted context was sent")
			assert.NilError(t, do(context.Background(), http.MethodGet))
			want := []string{"GET /apis/apps/v1/namespaces/ns/deployments/web"}
			if point == After {
				want = append(want, "PUT /apis/apps/v1/namespaces/ns/deployments/web")
			}
			want = append(want, "GET /apis/apps/v1/namespaces/ns/deployments/web")
			assert.DeepEqual(t, served, want)
		})
	}
}
