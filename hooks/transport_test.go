package hooks

import (
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
