package harness

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// TestLoopbackAndAuthentication checks that the API server listens on
// loopback only and refuses a client that does not authenticate.
func TestLoopbackAndAuthentication(t *testing.T) {
	cp := controlPlane(t)
	u, err := url.Parse(cp.Admin().Host)
	assert.NilError(t, err)
	host, _, err := net.SplitHostPort(u.Host)
	assert.NilError(t, err)
	assert.Assert(t, net.ParseIP(host).IsLoopback(), "the API server listens on %s", host)
	etcd := cp.EtcdURL()
	assert.Assert(t, etcd != nil && net.ParseIP(etcd.Hostname()).IsLoopback(), "etcd listens on %v", etcd)

	// No client certificate: the server must not serve the request.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Get(cp.Admin().Host + "/api/v1/namespaces")
	assert.NilError(t, err)
	resp.Body.Close()
	assert.Assert(t, resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden,
		"an unauthenticated list of namespaces got %d", resp.StatusCode)
}

// TestNoSecretsInOutput runs a scenario that fails, so that every kind of
// output is produced, and checks that no client key, certificate or bearer
// token appears in the trace, the timeline, the Mermaid and JSON renderings,
// the failure output, or the control plane's logs.
func TestNoSecretsInOutput(t *testing.T) {
	file := webAppScript(t, "failing.txtar", `# fails on purpose
create webapp.yaml
on after controller get deployments/web 1st: annotate bob deployments/web team=blue
reconcile webapps/web
reconcile webapps/web
field deployments/web spec.replicas 9
`)
	cp, opts := withRef(t, file)
	res := RunFiles(context.Background(), cp, opts)
	assert.Equal(t, len(res), 1)
	assert.Assert(t, !res[0].Passed)
	rows := res[0].Trace.Rows()
	js, err := JSON(rows)
	assert.NilError(t, err)
	outputs := map[string]string{
		"trace":    res[0].Trace.Normalize(),
		"timeline": Timeline(rows, true),
		"mermaid":  Mermaid(rows),
		"json":     js,
		"failure":  res[0].Log,
		"logs":     cp.Output(),
	}

	var secrets []string
	for _, name := range []string{"racekit-admin", "controller", "bob", "setup"} {
		cfg, err := cp.User(name)
		assert.NilError(t, err)
		for _, pem := range [][]byte{cfg.KeyData, cfg.CertData} {
			for _, line := range strings.Split(string(pem), "\n") {
				if len(line) > 40 { // a line of base64 from inside the PEM block
					secrets = append(secrets, line)
				}
			}
		}
		if cfg.BearerToken != "" {
			secrets = append(secrets, cfg.BearerToken)
		}
	}
	assert.Assert(t, len(secrets) > 0, "found no credentials to look for")
	for name, out := range outputs {
		assert.Assert(t, out != "", "%s is empty", name)
		for _, marker := range []string{"PRIVATE KEY", "BEGIN CERTIFICATE", "Bearer "} {
			assert.Assert(t, !strings.Contains(out, marker), "%s contains %q", name, marker)
		}
		for _, s := range secrets {
			assert.Assert(t, !strings.Contains(out, s), "%s contains a credential", name)
		}
	}
}
