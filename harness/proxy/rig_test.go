package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/racekit/racekit/internal/roundtrip"
)

// guard bounds a wait on a channel that some event must close or fill. It
// is never what orders events: a test that reaches it has failed.
const guard = 10 * time.Second

// rig is a proxy in front of an httptest upstream. Its actors' transports
// tag each request with the actor (header X-Test-Actor) for the upstream to
// see, and record the X-Test-Request header of each request they carry.
type rig struct {
	upstream *httptest.Server
	proxy    *Server
	log      *logSink

	// closedBodies receives the path of each response that the proxy has
	// closed: the last thing it does with an upstream answer.
	closedBodies chan string

	mu      sync.Mutex
	carried map[string][]string
}

// newRig starts upstream and a proxy in front of it with the given actors.
func newRig(t *testing.T, upstream http.Handler, unauthenticated http.RoundTripper, actors ...string) *rig {
	t.Helper()
	return newRigWith(t, upstream, Options{Unauthenticated: unauthenticated}, actors...)
}

// newRigWith is newRig with more options: the rig sets Upstream,
// Transport and Log.
func newRigWith(t *testing.T, upstream http.Handler, opts Options, actors ...string) *rig {
	t.Helper()
	r := &rig{log: newLogSink(), carried: make(map[string][]string), closedBodies: make(chan string, 100)}
	r.upstream = httptest.NewTLSServer(upstream)
	u, err := url.Parse(r.upstream.URL)
	assert.NilError(t, err)
	opts.Upstream, opts.Transport, opts.Log = u, r.transport, r.log
	r.proxy, err = Start(opts)
	assert.NilError(t, err)
	t.Cleanup(func() { r.close(t) })
	for _, a := range actors {
		assert.NilError(t, r.proxy.AddActor(a))
	}
	return r
}

// close closes the proxy, then the upstream, whose Close waits for its
// handlers; the proxy's Close has cancelled the requests they serve.
func (r *rig) close(t *testing.T) {
	t.Helper()
	closed := make(chan error, 1)
	go func() { closed <- r.proxy.Close() }()
	select {
	case err := <-closed:
		assert.Check(t, err)
	case <-time.After(guard):
		t.Error("the proxy's Close did not return: a handler is still running")
		return
	}
	r.upstream.Close()
	if unexpected := r.log.unexpected(); len(unexpected) > 0 {
		t.Errorf("the proxy logged what the test did not expect:\n%s", strings.Join(unexpected, ""))
	}
}

// transport is the rig's Options.Transport.
func (r *rig) transport(actor string) (http.RoundTripper, error) {
	if actor == "broken" {
		return nil, errors.New("no credentials for broken")
	}
	next := r.upstream.Client().Transport
	return roundtrip.Func(func(req *http.Request) (*http.Response, error) {
		r.mu.Lock()
		r.carried[actor] = append(r.carried[actor], req.Header.Get("X-Test-Request"))
		r.mu.Unlock()
		req = req.Clone(req.Context())
		req.Header.Set("X-Test-Actor", actor)
		resp, err := next.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		resp.Body = closeNotifier{resp.Body, func() { r.closedBodies <- req.URL.Path }}
		return resp, nil
	}), nil
}

// closeNotifier calls closed when the body is closed.
type closeNotifier struct {
	io.ReadCloser
	closed func()
}

func (c closeNotifier) Close() error {
	defer c.closed()
	return c.ReadCloser.Close()
}

// token returns actor's bearer token.
func (r *rig) token(t *testing.T, actor string) string {
	t.Helper()
	cfg, err := r.proxy.RESTConfig(actor)
	assert.NilError(t, err)
	return cfg.BearerToken
}

// client returns a client that trusts the proxy's CA and sends no
// credentials of its own: HTTP/2 if h2, else HTTP/1.1.
func (r *rig) client(t *testing.T, h2 bool) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	assert.Assert(t, pool.AppendCertsFromPEM(r.proxy.CAData()))
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: h2}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// get sends GET path with header to the proxy and returns the response with
// its body read.
func (r *rig) get(t *testing.T, c *http.Client, path string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, r.proxy.URL()+path, nil)
	assert.NilError(t, err)
	req.Header = header
	resp, err := c.Do(req)
	assert.NilError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	return resp, string(body)
}

func bearerHeader(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}

// logSink is a Log writer that a test can wait on.
type logSink struct {
	mu       sync.Mutex
	text     strings.Builder
	expected []string // what waitFor was asked for
	lines    chan string
}

func newLogSink() *logSink { return &logSink{lines: make(chan string, 1000)} }

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.text.Write(p)
	l.mu.Unlock()
	select {
	case l.lines <- string(p):
	default:
	}
	return len(p), nil
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text.String()
}

// unexpected returns the lines logged that no waitFor asked for.
func (l *logSink) unexpected() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var lines []string
	for _, line := range strings.SplitAfter(l.text.String(), "\n") {
		if line != "" && !slices.ContainsFunc(l.expected, func(e string) bool { return strings.Contains(line, e) }) {
			lines = append(lines, line)
		}
	}
	return lines
}

// waitFor returns the first line logged from now on that contains substr.
func (l *logSink) waitFor(t *testing.T, substr string) string {
	t.Helper()
	l.mu.Lock()
	l.expected = append(l.expected, substr)
	l.mu.Unlock()
	timeout := time.After(guard)
	for {
		select {
		case line := <-l.lines:
			if strings.Contains(line, substr) {
				return line
			}
		case <-timeout:
			t.Fatalf("no log line contains %q; the log:\n%s", substr, l)
		}
	}
}

// seen is what the upstream saw of a request.
type seen struct {
	Path, Query, Authorization, Actor, Host string
}

// recording answers every request with body and sends what it saw on ch.
func recording(ch chan<- seen, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ch <- seen{
			Path:          r.URL.EscapedPath(),
			Query:         r.URL.RawQuery,
			Authorization: r.Header.Get("Authorization"),
			Actor:         r.Header.Get("X-Test-Actor"),
			Host:          r.Host,
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
}

// watchUpstream serves a watch: it sends the first event at once, the
// second when release is closed. It closes done when it returns, and before
// that cancelled if its request's context ended first.
type watchUpstream struct {
	release, done, cancelled chan struct{}
}

const (
	event1 = `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"1"}}}` + "\n"
	event2 = `{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"2"}}}` + "\n"
)

func newWatchUpstream() *watchUpstream {
	return &watchUpstream{release: make(chan struct{}), done: make(chan struct{}), cancelled: make(chan struct{})}
}

func (u *watchUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer close(u.done)
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, event1)
	w.(http.Flusher).Flush()
	select {
	case <-u.release:
		io.WriteString(w, event2)
	case <-r.Context().Done():
		close(u.cancelled)
	}
}

// readLine reads a line from br, or fails the test after guard.
func readLine(t *testing.T, br *bufio.Reader, what string) (string, error) {
	t.Helper()
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := br.ReadString('\n')
		ch <- result{line, err}
	}()
	select {
	case res := <-ch:
		return res.line, res.err
	case <-time.After(guard):
		t.Fatalf("%s did not arrive", what)
		return "", nil
	}
}

// wait fails the test if ch is not closed within guard.
func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(guard):
		t.Fatalf("%s did not happen", what)
	}
}

// watchClients are the clients a watch is tested with: client-go's own,
// which speaks HTTP/2, and an HTTP/1.1 client, which gets chunked encoding.
var watchClients = []struct {
	name  string
	proto int
	make  func(t *testing.T, r *rig) *http.Client
}{
	{"client-go HTTP/2", 2, func(t *testing.T, r *rig) *http.Client {
		cfg, err := r.proxy.RESTConfig("alice")
		assert.NilError(t, err)
		hc, err := rest.HTTPClientFor(cfg)
		assert.NilError(t, err)
		t.Cleanup(func() { utilnet.CloseIdleConnectionsFor(hc.Transport) })
		return hc
	}},
	{"HTTP/1.1", 1, func(t *testing.T, r *rig) *http.Client {
		c := r.client(t, false)
		c.Transport = bearerTransport{r.token(t, "alice"), c.Transport}
		return c
	}},
}

type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(req)
}

func (b bearerTransport) CloseIdleConnections() { utilnet.CloseIdleConnectionsFor(b.next) }

const watchPath = "/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=0"

// startWatch starts a watch through the proxy and returns its body.
func startWatch(t *testing.T, ctx context.Context, r *rig, c *http.Client, proto int) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.proxy.URL()+watchPath, nil)
	assert.NilError(t, err)
	type result struct {
		resp *http.Response
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		resp, err := c.Do(req)
		ch <- result{resp, err}
	}()
	var resp *http.Response
	select {
	case res := <-ch:
		assert.NilError(t, res.err)
		resp = res.resp
	case <-time.After(guard):
		t.Fatal("the watch's response headers did not arrive")
	}
	t.Cleanup(func() { resp.Body.Close() })
	assert.Equal(t, resp.StatusCode, http.StatusOK)
	assert.Equal(t, resp.ProtoMajor, proto)
	return resp
}
