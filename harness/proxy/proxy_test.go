package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"gotest.tools/v3/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/racekit/racekit/internal/roundtrip"
)

// TestMain fails the package if any test leaves a goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestForward checks that a request reaches the upstream with its path and
// query intact, through its actor's transport, without the client's token,
// and that the upstream's answer comes back unchanged.
func TestForward(t *testing.T) {
	ch := make(chan seen, 1)
	const body = `{"kind":"PodList","apiVersion":"v1","items":[]}`
	r := newRig(t, recording(ch, body), nil, "alice")
	host := strings.TrimPrefix(r.upstream.URL, "https://")
	c := r.client(t, true)

	for _, tc := range []struct{ name, path, query string }{
		{"path", "/api/v1/namespaces/ns/pods", ""},
		{"query", "/api/v1/namespaces/ns/pods", "labelSelector=app%3Dweb&limit=5"},
		{"escaped slash in a name", "/api/v1/namespaces/ns/configmaps/a%2Fb", ""},
		{"watch", "/apis/apps/v1/namespaces/ns/deployments", "watch=true&resourceVersion=7&allowWatchBookmarks=true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			uri := tc.path
			if tc.query != "" {
				uri += "?" + tc.query
			}
			resp, got := r.get(t, c, uri, bearerHeader(r.token(t, "alice")))
			assert.Equal(t, resp.StatusCode, http.StatusOK)
			assert.Equal(t, resp.Header.Get("Content-Type"), "application/json")
			assert.Equal(t, got, body)
			assert.DeepEqual(t, <-ch, seen{Path: tc.path, Query: tc.query, Actor: "alice", Host: host})
		})
	}
}

// TestActorByToken checks that each token selects its own actor's
// transport, whatever else the request says.
func TestActorByToken(t *testing.T) {
	ch := make(chan seen, 1)
	r := newRig(t, recording(ch, `{}`), nil, "alice", "bob")
	alice, bob := r.token(t, "alice"), r.token(t, "bob")
	c := r.client(t, true)

	want := map[string][]string{}
	for _, tc := range []struct {
		name   string
		header http.Header
		want   string
	}{
		{"alice", http.Header{"Authorization": {"Bearer " + alice}}, "alice"},
		{"bob", http.Header{"Authorization": {"Bearer " + bob}}, "bob"},
		{"alice claims bob in other headers", http.Header{
			"Authorization":    {"Bearer " + alice},
			"X-Test-Actor":     {"bob"},
			"X-Racekit-Actor":  {"bob"},
			"X-Remote-User":    {"bob"},
			"X-Forwarded-User": {"bob"},
		}, "alice"},
		{"bob, scheme in lower case", http.Header{"Authorization": {"bearer " + bob}}, "bob"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.header.Set("X-Test-Request", tc.name)
			resp, _ := r.get(t, c, "/api/v1/namespaces", tc.header)
			assert.Equal(t, resp.StatusCode, http.StatusOK)
			got := <-ch
			assert.Equal(t, got.Actor, tc.want)
			assert.Equal(t, got.Authorization, "")
			// Only the cases go test -run selects run: want those.
			want[tc.want] = append(want[tc.want], tc.name)
		})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	assert.DeepEqual(t, r.carried, want)
}

// TestUnauthenticated checks that a request without an actor's token goes
// to Unauthenticated, by default Refuse, and never upstream.
func TestUnauthenticated(t *testing.T) {
	upstreamCalls := make(chan string, 100)
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstreamCalls <- r.URL.Path
	})
	headers := []struct {
		name   string
		header func(token string) http.Header
		why    string
	}{
		{"no Authorization", func(string) http.Header { return http.Header{} }, "no Authorization header"},
		{"unknown token", func(string) http.Header { return bearerHeader("not-a-token") }, "unknown bearer token"},
		{"empty token", func(string) http.Header { return bearerHeader("") }, "empty bearer token"},
		{"token of alice in Basic", func(token string) http.Header {
			return http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("alice:"+token))}}
		}, "the Authorization header is not a bearer token"},
	}

	t.Run("Refuse", func(t *testing.T) {
		r := newRig(t, upstream, nil, "alice")
		c := r.client(t, true)
		for _, h := range headers {
			t.Run(h.name, func(t *testing.T) {
				resp, body := r.get(t, c, "/api/v1/namespaces", h.header(r.token(t, "alice")))
				assert.Equal(t, resp.StatusCode, http.StatusUnauthorized)
				assert.Equal(t, resp.Header.Get("Content-Type"), "application/json")
				var status metav1.Status
				assert.NilError(t, json.Unmarshal([]byte(body), &status), body)
				assert.DeepEqual(t, status, metav1.Status{
					TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
					Status:   metav1.StatusFailure,
					Reason:   metav1.StatusReasonUnauthorized,
					Code:     http.StatusUnauthorized,
					Message:  "racekit proxy: no actor's credentials: " + h.why,
				})
			})
		}
	})

	t.Run("custom", func(t *testing.T) {
		// The custom answer records what it was given: the request, less the
		// client's credentials.
		got := make(chan string, 1)
		custom := roundtrip.Func(func(req *http.Request) (*http.Response, error) {
			got <- req.URL.Path + " Authorization=" + req.Header.Get("Authorization")
			return &http.Response{
				StatusCode: http.StatusTeapot,
				Header:     http.Header{},
				Body:       io.NopCloser(strings.NewReader("custom")),
				Request:    req,
			}, nil
		})
		r := newRig(t, upstream, custom, "alice")
		c := r.client(t, true)
		for _, h := range headers {
			t.Run(h.name, func(t *testing.T) {
				resp, body := r.get(t, c, "/api/v1/namespaces", h.header(r.token(t, "alice")))
				assert.Equal(t, resp.StatusCode, http.StatusTeapot)
				assert.Equal(t, body, "custom")
				assert.Equal(t, <-got, "/api/v1/namespaces Authorization=")
			})
		}
	})

	select {
	case path := <-upstreamCalls:
		t.Fatalf("the upstream served %s", path)
	default:
	}
}

// TestUpstreamError checks that a failed upstream call becomes a 502 with a
// metav1.Status, and a line in the log.
func TestUpstreamError(t *testing.T) {
	log := newLogSink()
	p, err := Start(Options{
		Upstream: &url.URL{Scheme: "https", Host: "127.0.0.1:1"},
		Transport: func(string) (http.RoundTripper, error) {
			return roundtrip.Func(func(*http.Request) (*http.Response, error) {
				return nil, errors.New("connection refused")
			}), nil
		},
		Log: log,
	})
	assert.NilError(t, err)
	defer p.Close()
	assert.NilError(t, p.AddActor("alice"))
	cfg, err := p.RESTConfig("alice")
	assert.NilError(t, err)
	hc, err := rest.HTTPClientFor(cfg)
	assert.NilError(t, err)
	defer utilnet.CloseIdleConnectionsFor(hc.Transport)

	resp, err := hc.Get(p.URL() + "/api/v1/namespaces")
	assert.NilError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, resp.StatusCode, http.StatusBadGateway)
	var status metav1.Status
	assert.NilError(t, json.NewDecoder(resp.Body).Decode(&status))
	assert.Equal(t, status.Code, int32(http.StatusBadGateway))
	assert.Equal(t, status.Message, "racekit proxy: GET /api/v1/namespaces as alice: upstream: connection refused")
	log.waitFor(t, "GET /api/v1/namespaces as alice: upstream: connection refused")
}

// TestWatchStreams checks that each watch event reaches the client when the
// upstream sends it: the first arrives while the upstream still holds the
// stream open, before the test lets it send the second.
func TestWatchStreams(t *testing.T) {
	for _, wc := range watchClients {
		t.Run(wc.name, func(t *testing.T) {
			up := newWatchUpstream()
			r := newRig(t, up, nil, "alice")
			resp := startWatch(t, context.Background(), r, wc.make(t, r), wc.proto)
			br := bufio.NewReader(resp.Body)

			line, err := readLine(t, br, "the first event, while the upstream holds the stream,")
			assert.NilError(t, err)
			assert.Equal(t, line, event1)

			close(up.release)
			line, err = readLine(t, br, "the second event")
			assert.NilError(t, err)
			assert.Equal(t, line, event2)
			_, err = readLine(t, br, "the end of the stream")
			assert.Equal(t, err, io.EOF)
		})
	}
}

// TestAbandonedWatch checks that a watch the client cancels mid-stream ends
// its request upstream, and that nothing of it is left once the proxy is
// closed.
func TestAbandonedWatch(t *testing.T) {
	for _, wc := range watchClients {
		t.Run(wc.name, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			up := newWatchUpstream()
			r := newRig(t, up, nil, "alice")
			c := wc.make(t, r)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			resp := startWatch(t, ctx, r, c, wc.proto)
			line, err := readLine(t, bufio.NewReader(resp.Body), "the first event")
			assert.NilError(t, err)
			assert.Equal(t, line, event1)

			cancel()
			wait(t, up.cancelled, "the upstream seeing its request cancelled")
			wait(t, up.done, "the upstream handler returning")
			resp.Body.Close()
			r.close(t)
			utilnet.CloseIdleConnectionsFor(c.Transport)
			goleak.VerifyNone(t, ignore)
		})
	}
}

// TestCloseEndsWatch checks that Close returns while a watch is in flight,
// and ends the client's stream and the upstream's request.
func TestCloseEndsWatch(t *testing.T) {
	for _, wc := range watchClients {
		t.Run(wc.name, func(t *testing.T) {
			up := newWatchUpstream()
			r := newRig(t, up, nil, "alice")
			resp := startWatch(t, context.Background(), r, wc.make(t, r), wc.proto)
			br := bufio.NewReader(resp.Body)
			line, err := readLine(t, br, "the first event")
			assert.NilError(t, err)
			assert.Equal(t, line, event1)

			closed := make(chan error, 1)
			go func() { closed <- r.proxy.Close() }()
			select {
			case err := <-closed:
				assert.NilError(t, err)
			case <-time.After(guard):
				t.Fatal("Close did not return with a watch in flight")
			}
			select {
			case <-r.closedBodies:
			default:
				t.Fatal("Close returned before the watch's handler closed its upstream response")
			}
			wait(t, up.cancelled, "the upstream seeing its request cancelled")
			line, err = readLine(t, br, "the end of the client's stream")
			assert.Assert(t, err != nil, "the stream went on after Close: %q", line)
		})
	}
}

// TestUnparseable checks that what is not HTTPS gets net/http's 400 and a
// line in the log, and that the proxy goes on serving.
func TestUnparseable(t *testing.T) {
	ch := make(chan seen, 1)
	r := newRig(t, recording(ch, `{}`), nil, "alice")
	addr := strings.TrimPrefix(r.proxy.URL(), "https://")

	for _, tc := range []struct {
		name string
		send func(t *testing.T) int
		log  string
	}{
		{"garbage over TLS", func(t *testing.T) int {
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(r.proxy.CAData())
			conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
			assert.NilError(t, err)
			defer conn.Close()
			_, err = io.WriteString(conn, "this is not http\r\n\r\n")
			assert.NilError(t, err)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			assert.NilError(t, err)
			resp.Body.Close()
			return resp.StatusCode
		}, "sent what is not an HTTP request"},
		{"plain HTTP", func(t *testing.T) int {
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			resp, err := (&http.Client{Transport: tr}).Get("http://" + addr + "/api/v1/namespaces")
			assert.NilError(t, err)
			resp.Body.Close()
			return resp.StatusCode
		}, "client sent an HTTP request to an HTTPS server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.send(t), http.StatusBadRequest)
			r.log.waitFor(t, tc.log)

			resp, _ := r.get(t, r.client(t, true), "/api/v1/namespaces", bearerHeader(r.token(t, "alice")))
			assert.Equal(t, resp.StatusCode, http.StatusOK)
			assert.Equal(t, (<-ch).Actor, "alice")
		})
	}
}

// TestKubeconfig checks that a kubeconfig names the proxy, its CA, the
// actor's token and the namespace, and that client-go reaches the upstream
// with it as the actor.
func TestKubeconfig(t *testing.T) {
	ch := make(chan seen, 1)
	const cm = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"settings","namespace":"team-a"},"data":{"mode":"fast"}}`
	r := newRig(t, recording(ch, cm), nil, "alice", "bob")

	kubeconfig, err := r.proxy.Kubeconfig("alice", "team-a")
	assert.NilError(t, err)
	cfg, err := clientcmd.Load(kubeconfig)
	assert.NilError(t, err)
	type summary struct {
		Current, Cluster, User, Namespace, Server, CA, Token string
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	assert.Assert(t, ctx != nil, "no context %q", cfg.CurrentContext)
	cluster, user := cfg.Clusters[ctx.Cluster], cfg.AuthInfos[ctx.AuthInfo]
	assert.Assert(t, cluster != nil && user != nil, "context %q names cluster %q and user %q", cfg.CurrentContext, ctx.Cluster, ctx.AuthInfo)
	assert.DeepEqual(t, summary{
		Current: cfg.CurrentContext, Cluster: ctx.Cluster, User: ctx.AuthInfo, Namespace: ctx.Namespace,
		Server: cluster.Server, CA: string(cluster.CertificateAuthorityData), Token: user.Token,
	}, summary{
		Current: "racekit-alice", Cluster: "racekit", User: "alice", Namespace: "team-a",
		Server: r.proxy.URL(), CA: string(r.proxy.CAData()), Token: r.token(t, "alice"),
	})

	restConfig, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	assert.NilError(t, err)
	hc, err := rest.HTTPClientFor(restConfig)
	assert.NilError(t, err)
	defer utilnet.CloseIdleConnectionsFor(hc.Transport)
	cs, err := kubernetes.NewForConfigAndClient(restConfig, hc)
	assert.NilError(t, err)
	got, err := cs.CoreV1().ConfigMaps(ctx.Namespace).Get(context.Background(), "settings", metav1.GetOptions{})
	assert.NilError(t, err)
	assert.DeepEqual(t, got.Data, map[string]string{"mode": "fast"})
	host := strings.TrimPrefix(r.upstream.URL, "https://")
	assert.DeepEqual(t, <-ch, seen{Path: "/api/v1/namespaces/team-a/configmaps/settings", Actor: "alice", Host: host})
}

// TestActorErrors checks the errors of AddActor, Kubeconfig and RESTConfig.
func TestActorErrors(t *testing.T) {
	r := newRig(t, http.NotFoundHandler(), nil, "alice", "bob")
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"AddActor twice", func() error { return r.proxy.AddActor("alice") }, "add actor alice: already added"},
		{"AddActor without a name", func() error { return r.proxy.AddActor("") }, "add actor: the name is empty"},
		{"AddActor whose Transport fails", func() error { return r.proxy.AddActor("broken") }, "add actor broken: no credentials for broken"},
		{"Kubeconfig of an unknown actor", func() error {
			_, err := r.proxy.Kubeconfig("carol", "ns")
			return err
		}, "kubeconfig: unknown actor carol; the proxy knows alice, bob"},
		{"RESTConfig of an unknown actor", func() error {
			_, err := r.proxy.RESTConfig("carol")
			return err
		}, "rest config: unknown actor carol; the proxy knows alice, bob"},
		{"RESTConfig of an actor whose Transport failed", func() error {
			_, err := r.proxy.RESTConfig("broken")
			return err
		}, "rest config: unknown actor broken; the proxy knows alice, bob"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Error(t, tc.call(), tc.want)
		})
	}
}
