package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// BenchmarkProxyGET measures the proxy's own cost on loopback: a GET of a
// small object straight from an httptest upstream (HTTP/1.1 over TLS), and
// the same GET through the proxy as client-go sends it (HTTP/2 to the
// proxy, then the actor's transport to the upstream).
func BenchmarkProxyGET(b *testing.B) {
	const (
		path = "/api/v1/namespaces/ns/configmaps/settings"
		body = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"settings","namespace":"ns","resourceVersion":"7"},"data":{"mode":"fast"}}`
	)
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
	defer upstream.Close()
	u, err := url.Parse(upstream.URL)
	if err != nil {
		b.Fatal(err)
	}
	p, err := Start(Options{
		Upstream:  u,
		Transport: func(string) (http.RoundTripper, error) { return upstream.Client().Transport, nil },
	})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	if err := p.AddActor("bench"); err != nil {
		b.Fatal(err)
	}
	cfg, err := p.RESTConfig("bench")
	if err != nil {
		b.Fatal(err)
	}
	proxied, err := rest.HTTPClientFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer utilnet.CloseIdleConnectionsFor(proxied.Transport)

	for _, bc := range []struct {
		name   string
		client *http.Client
		url    string
	}{
		{"direct", upstream.Client(), upstream.URL + path},
		{"proxy", proxied, p.URL() + path},
	} {
		b.Run(bc.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				resp, err := bc.client.Get(bc.url)
				if err != nil {
					b.Fatal(err)
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || string(got) != body {
					b.Fatalf("GET %s: %d %q, %v", bc.url, resp.StatusCode, got, err)
				}
				n++
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/op")
		})
	}
}
