package registry_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/controller/registry"
)

// TestServerWireFormat sends one conversation to a fresh server and checks
// each answer: status code and JSON body. The steps run in order, since each
// depends on the records the ones before it left.
func TestServerWireFormat(t *testing.T) {
	srv := registry.NewServer()
	hs := httptest.NewServer(srv)
	defer hs.Close()

	steps := []struct {
		name        string
		method      string
		path        string
		body        string
		wantCode    int
		wantBody    map[string]string
		wantCreates int
	}{
		{"get before register", "GET", "/registrations/ns/web", "", 404, map[string]string{"error": "no registration of ns/web"}, 0},
		{"first register creates", "POST", "/registrations/ns/web", `{"uid":"u1"}`, 201, map[string]string{"id": "reg-1", "uid": "u1", "name": "ns/web"}, 1},
		{"same uid returns the record", "POST", "/registrations/ns/web", `{"uid":"u1"}`, 200, map[string]string{"id": "reg-1", "uid": "u1", "name": "ns/web"}, 1},
		{"other uid is refused", "POST", "/registrations/ns/web", `{"uid":"u2"}`, 409, map[string]string{"error": "ns/web is registered to uid u1, not u2"}, 1},
		{"other name creates the next id", "POST", "/registrations/other/web", `{"uid":"u3"}`, 201, map[string]string{"id": "reg-2", "uid": "u3", "name": "other/web"}, 2},
		{"get returns the record", "GET", "/registrations/ns/web", "", 200, map[string]string{"id": "reg-1", "uid": "u1", "name": "ns/web"}, 2},
		{"delete by other uid is refused", "DELETE", "/registrations/ns/web?uid=u2", "", 409, map[string]string{"error": "ns/web is registered to uid u1, not u2"}, 2},
		{"refused delete keeps the record", "GET", "/registrations/ns/web", "", 200, map[string]string{"id": "reg-1", "uid": "u1", "name": "ns/web"}, 2},
		{"delete by owner", "DELETE", "/registrations/ns/web?uid=u1", "", 204, nil, 2},
		{"delete again is idempotent", "DELETE", "/registrations/ns/web?uid=u1", "", 204, nil, 2},
		{"get after delete", "GET", "/registrations/ns/web", "", 404, map[string]string{"error": "no registration of ns/web"}, 2},
		{"new uid after delete creates", "POST", "/registrations/ns/web", `{"uid":"u2"}`, 201, map[string]string{"id": "reg-3", "uid": "u2", "name": "ns/web"}, 3},
		{"register without uid", "POST", "/registrations/ns/x", `{}`, 400, map[string]string{"error": `body must name the owner: {"uid": UID}`}, 3},
		{"register with a bad body", "POST", "/registrations/ns/x", `uid`, 400, map[string]string{"error": "decode body: invalid character 'u' looking for beginning of value"}, 3},
		{"delete without uid", "DELETE", "/registrations/ns/web", "", 400, map[string]string{"error": "query must name the owner: ?uid=UID"}, 3},
	}
	for _, st := range steps {
		req, err := http.NewRequest(st.method, hs.URL+st.path, strings.NewReader(st.body))
		assert.NilError(t, err)
		resp, err := hs.Client().Do(req)
		assert.NilError(t, err)
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.NilError(t, err)
		assert.Equal(t, resp.StatusCode, st.wantCode, "%s: body %s", st.name, data)
		var got map[string]string
		if len(data) > 0 {
			assert.NilError(t, json.Unmarshal(data, &got), "%s: body %s", st.name, data)
		}
		assert.Assert(t, cmp.Equal(got, st.wantBody), "%s: body (-got +want):\n%s", st.name, cmp.Diff(got, st.wantBody))
		assert.Equal(t, srv.Creates(), st.wantCreates, st.name)
	}
}

// TestServerRefusesOtherMethods checks that the verbs the recorder derives
// from methods are the only ones served.
func TestServerRefusesOtherMethods(t *testing.T) {
	hs := httptest.NewServer(registry.NewServer())
	defer hs.Close()
	for _, m := range []string{http.MethodPut, http.MethodPatch} {
		req, err := http.NewRequest(m, hs.URL+"/registrations/ns/web", strings.NewReader(`{"uid":"u1"}`))
		assert.NilError(t, err)
		resp, err := hs.Client().Do(req)
		assert.NilError(t, err)
		resp.Body.Close()
		assert.Equal(t, resp.StatusCode, http.StatusMethodNotAllowed, m)
	}
}

// TestServerConcurrentRegister checks that racing registrations of one name
// and uid create one record. The handler is called directly, so that no
// network round trip orders the calls and the race detector sees them.
func TestServerConcurrentRegister(t *testing.T) {
	srv := registry.NewServer()
	codes := make(chan int, 20)
	var wg sync.WaitGroup
	for range cap(codes) {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, httptest.NewRequest("POST", "/registrations/ns/web", strings.NewReader(`{"uid":"u1"}`)))
			codes <- rec.Code
		})
	}
	wg.Wait()
	close(codes)
	got := map[int]int{}
	for c := range codes {
		got[c]++
	}
	assert.DeepEqual(t, got, map[int]int{http.StatusCreated: 1, http.StatusOK: cap(codes) - 1})
	assert.Equal(t, srv.Creates(), 1)
}
