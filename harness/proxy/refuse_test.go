package proxy

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/racekit/racekit/internal/roundtrip"
)

// refusalLog is an Options.Refusals that notes each refusal it carries, as
// the harness's recorder would.
type refusalLog struct {
	mu   sync.Mutex
	seen []string // "actor METHOD PATH CODE"
}

func (l *refusalLog) wrap(actor string) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundtrip.Func(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			if err == nil {
				l.mu.Lock()
				l.seen = append(l.seen, strings.Join([]string{actor, req.Method, req.URL.Path, resp.Status}, " "))
				l.mu.Unlock()
			}
			return resp, err
		})
	}
}

func (l *refusalLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// send sends method path with header as actor to the proxy, over HTTP/1.1
// (an HTTP/2 client sends no Connection header), and returns the status
// and the Status it answered with, if any.
func (r *rig) send(t *testing.T, actor, method, path string, header http.Header) (int, metav1.Status, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, r.proxy.URL()+path, nil)
	assert.NilError(t, err)
	req.Header = header.Clone()
	req.Header.Set("Authorization", "Bearer "+r.token(t, actor))
	resp, err := r.client(t, false).Do(req)
	assert.NilError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	var st metav1.Status
	_ = json.Unmarshal(body, &st)
	return resp.StatusCode, st, resp.Header
}

// TestRefuseImpersonation checks that a request with impersonation headers
// is answered 403 by the proxy itself, naming the headers and why, through
// Refusals, and never reaches the API server; and that an actor whose
// impersonation is allowed has its request sent on, headers and all, for
// the API server to decide.
func TestRefuseImpersonation(t *testing.T) {
	upstream := make(chan http.Header, 10)
	refusals := &refusalLog{}
	r := newRigWith(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstream <- r.Header.Clone()
		io.WriteString(w, `{}`)
	}), Options{
		Impersonation: func(actor string) error {
			if actor == "carol" {
				return nil
			}
			return errors.New("declare it first")
		},
		Refusals: refusals.wrap,
	}, "alice", "carol")

	ran := 0 // the cases go test -run selects
	for _, tc := range []struct {
		name   string
		header http.Header
		want   string
	}{
		{"user", http.Header{"Impersonate-User": {"bob"}}, "Impersonate-User: bob"},
		{"group", http.Header{"Impersonate-Group": {"system:masters", "admins"}}, "Impersonate-Group: system:masters, admins"},
		{"uid", http.Header{"Impersonate-Uid": {"1234"}}, "Impersonate-Uid: 1234"},
		{"extra", http.Header{"Impersonate-Extra-Scopes": {"view"}}, "Impersonate-Extra-Scopes: view"},
		{"several, in lower case", http.Header{"impersonate-user": {"bob"}, "impersonate-extra-reason": {"x"}}, "Impersonate-Extra-Reason: x, Impersonate-User: bob"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, st, _ := r.send(t, "alice", http.MethodGet, "/api/v1/namespaces/ns/pods", tc.header)
			assert.Equal(t, code, http.StatusForbidden)
			assert.Equal(t, st.Reason, metav1.StatusReasonForbidden)
			assert.Equal(t, st.Code, int32(http.StatusForbidden))
			assert.Assert(t, strings.Contains(st.Message, "GET /api/v1/namespaces/ns/pods as alice carries "+tc.want+", which asks the API server to act as another user"), "%s", st.Message)
			assert.Assert(t, strings.HasSuffix(st.Message, ": declare it first"), "%s", st.Message)
			ran++
		})
	}
	assert.Equal(t, len(upstream), 0, "a refused request reached the API server")
	assert.Equal(t, len(refusals.all()), ran)
	for _, r := range refusals.all() {
		assert.Equal(t, r, "alice GET /api/v1/namespaces/ns/pods 403 Forbidden")
	}

	code, _, _ := r.send(t, "carol", http.MethodGet, "/api/v1/namespaces/ns/pods", http.Header{"Impersonate-User": {"bob"}, "Impersonate-Group": {"admins"}})
	assert.Equal(t, code, http.StatusOK)
	got := <-upstream
	assert.Equal(t, got.Get("Impersonate-User"), "bob")
	assert.Equal(t, got.Get("Impersonate-Group"), "admins")
	assert.Equal(t, len(refusals.all()), ran, "an allowed impersonation was refused")

	t.Run("no Impersonation refuses everyone", func(t *testing.T) {
		plain := newRigWith(t, http.NotFoundHandler(), Options{}, "alice")
		code, st, _ := plain.send(t, "alice", http.MethodGet, "/api/v1/pods", http.Header{"Impersonate-User": {"bob"}})
		assert.Equal(t, code, http.StatusForbidden)
		assert.Assert(t, strings.HasSuffix(st.Message, "no actor may impersonate through this proxy"), "%s", st.Message)
	})
}

// TestRefuseUpgrade checks that a request to upgrade its connection, as
// exec, attach and port-forward ask with SPDY or WebSocket, is answered
// 501 by the proxy itself, saying why, through Refusals, and never reaches
// the API server.
func TestRefuseUpgrade(t *testing.T) {
	upstream := make(chan string, 10)
	refusals := &refusalLog{}
	r := newRigWith(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstream <- r.URL.Path
		// What kube-apiserver answers an exec that asks for no upgrade.
		http.Error(w, "Upgrade request required", http.StatusBadRequest)
	}), Options{Refusals: refusals.wrap}, "alice")

	var want []string // what the cases go test -run selects refuse
	for _, tc := range []struct {
		name, method, path string
		header             http.Header
		want               string
	}{
		{"exec over SPDY", http.MethodPost, "/api/v1/namespaces/ns/pods/web/exec", http.Header{"Connection": {"Upgrade"}, "Upgrade": {"SPDY/3.1"}, "X-Stream-Protocol-Version": {"v4.channel.k8s.io"}}, "(Upgrade: SPDY/3.1)"},
		{"attach over WebSocket", http.MethodGet, "/api/v1/namespaces/ns/pods/web/attach", http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Version": {"13"}, "Sec-Websocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="}}, "(Upgrade: websocket)"},
		{"port-forward, Connection alone", http.MethodPost, "/api/v1/namespaces/ns/pods/web/portforward", http.Header{"Connection": {"keep-alive, Upgrade"}}, "(Connection: Upgrade)"},
		{"a tunnel", http.MethodConnect, "/api/v1/namespaces/ns/pods/web/portforward", http.Header{}, "(CONNECT)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, st, _ := r.send(t, "alice", tc.method, tc.path, tc.header)
			assert.Equal(t, code, http.StatusNotImplemented)
			assert.Equal(t, st.Code, int32(http.StatusNotImplemented))
			assert.Assert(t, strings.Contains(st.Message, tc.method+" "+tc.path+" as alice asks to upgrade the connection "+tc.want), "%s", st.Message)
			assert.Assert(t, strings.Contains(st.Message, "the only kubelets here are hollow ones"), "%s", st.Message)
			want = append(want, "alice "+tc.method+" "+tc.path+" 501 Not Implemented")
		})
	}
	assert.Equal(t, len(upstream), 0, "an upgrade reached the API server")
	assert.DeepEqual(t, refusals.all(), want)

	// A request without an upgrade goes on, to the same path, for the API
	// server to answer.
	code, _, _ := r.send(t, "alice", http.MethodPost, "/api/v1/namespaces/ns/pods/web/exec", http.Header{"Connection": {"keep-alive"}})
	assert.Equal(t, code, http.StatusBadRequest)
	assert.Equal(t, <-upstream, "/api/v1/namespaces/ns/pods/web/exec")
}
