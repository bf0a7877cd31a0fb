package proxy

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// clusterName names the proxy in the kubeconfigs it writes.
const clusterName = "racekit"

// actor is a client the proxy knows by its bearer token.
type actor struct {
	name    string
	token   string
	forward *httputil.ReverseProxy
	// refused answers the requests the proxy refuses (refuse.go).
	refused *httputil.ReverseProxy
}

// AddActor mints a bearer token for the actor name and asks
// Options.Transport for the RoundTripper that carries its requests. Adding a
// name twice is an error.
func (s *Server) AddActor(name string) error {
	if name == "" {
		return errors.New("add actor: the name is empty")
	}
	s.addMu.Lock()
	defer s.addMu.Unlock()
	s.mu.Lock()
	_, dup := s.actors[name]
	s.mu.Unlock()
	if dup {
		return fmt.Errorf("add actor %s: already added", name)
	}

	transport, err := s.transport(name)
	if err != nil {
		return fmt.Errorf("add actor %s: %w", name, err)
	}
	if transport == nil {
		return fmt.Errorf("add actor %s: Options.Transport returned no RoundTripper", name)
	}
	var refusing http.RoundTripper = refuser{}
	if s.refusals != nil {
		refusing = s.refusals(name)(refusing)
	}
	a := &actor{
		name:    name,
		token:   newToken(),
		forward: s.forwarder(transport, name),
		refused: s.forwarder(refusing, name),
	}
	s.mu.Lock()
	s.actors[name] = a
	s.mu.Unlock()
	return nil
}

// newToken returns 32 random bytes, base64url-encoded.
func newToken() string {
	b := make([]byte, 32)
	rand.Read(b) // Never fails: crypto/rand.Read crashes the program instead.
	return base64.RawURLEncoding.EncodeToString(b)
}

// actorByToken returns the actor whose token is token, or nil. It compares
// in constant time, so a client cannot guess a token byte by byte. The
// caller holds s.mu.
func (s *Server) actorByToken(token string) *actor {
	var found *actor
	for _, a := range s.actors {
		if subtle.ConstantTimeCompare([]byte(a.token), []byte(token)) == 1 {
			found = a
		}
	}
	return found
}

// lookup returns the actor named name, or an error that lists the known
// actors.
func (s *Server) lookup(name string) (*actor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.actors[name]; ok {
		return a, nil
	}
	known := make([]string, 0, len(s.actors))
	for n := range s.actors {
		known = append(known, n)
	}
	slices.Sort(known)
	if len(known) == 0 {
		return nil, fmt.Errorf("unknown actor %s: the proxy has no actors yet (AddActor)", name)
	}
	return nil, fmt.Errorf("unknown actor %s; the proxy knows %s", name, strings.Join(known, ", "))
}

// Kubeconfig returns a kubeconfig file for actor: cluster "racekit" (the
// proxy's URL and CA), user actor with its bearer token, and the current
// context "racekit-ACTOR" with namespace as its default namespace.
func (s *Server) Kubeconfig(actor, namespace string) ([]byte, error) {
	a, err := s.lookup(actor)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	current := clusterName + "-" + a.name
	config := clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{
			clusterName: {Server: s.url, CertificateAuthorityData: s.CAData()},
		},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{
			a.name: {Token: a.token},
		},
		Contexts: map[string]*clientcmdapi.Context{
			current: {Cluster: clusterName, AuthInfo: a.name, Namespace: namespace},
		},
		CurrentContext: current,
	}
	return clientcmd.Write(config)
}

// RESTConfig returns what Kubeconfig describes for actor, less the
// namespace, as a rest.Config for a client in this process.
func (s *Server) RESTConfig(actor string) (*rest.Config, error) {
	a, err := s.lookup(actor)
	if err != nil {
		return nil, fmt.Errorf("rest config: %w", err)
	}
	return &rest.Config{
		Host:            s.url,
		BearerToken:     a.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.CAData()},
	}, nil
}
