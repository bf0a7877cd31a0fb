package proxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Options configures a proxy.
type Options struct {
	// Upstream is the API server's base URL (https://127.0.0.1:PORT);
	// requests keep their path and query.
	Upstream *url.URL
	// Transport returns the RoundTripper that sends actor's requests to
	// Upstream, authenticated as actor. Called once per actor, by AddActor.
	Transport func(actor string) (http.RoundTripper, error)
	// Unauthenticated answers a request that carries no actor's credentials
	// (no bearer token, or an unknown one); nil means Refuse. The harness
	// wraps Refuse in its recorder so the refusal shows in the trace.
	Unauthenticated http.RoundTripper
	// Log receives the proxy's own errors (a request it cannot parse, a
	// failed TLS handshake, an upstream error); nil discards them.
	Log io.Writer

	// Confine keeps the actors' reads of every namespace to one
	// (confine.go); its zero value confines nothing.
	Confine Confinement
	// Impersonation says whether actor may send impersonation headers
	// (refuse.go): nil lets it, the API server then deciding by its RBAC;
	// an error, which the refusal quotes, says why not. A nil Impersonation
	// refuses every actor.
	Impersonation func(actor string) error
	// Refusals wraps, for actor, what answers the requests the proxy
	// refuses (an impersonation, an upgrade): the harness records them
	// there as the actor's calls. nil leaves them unrecorded.
	Refusals func(actor string) func(http.RoundTripper) http.RoundTripper
}

// Server is a running proxy. Its methods are safe for concurrent use.
type Server struct {
	upstream  *url.URL
	transport func(actor string) (http.RoundTripper, error)
	log       *log.Logger
	srv       *http.Server
	url       string
	caPEM     []byte
	refuse    *httputil.ReverseProxy

	confine       Confinement
	impersonation func(actor string) error
	refusals      func(actor string) func(http.RoundTripper) http.RoundTripper

	// cancel ends the context of every request, so that a handler waiting on
	// its upstream (a watch) returns when the proxy closes.
	cancel context.CancelFunc
	// served is closed when the http.Server's Serve has returned.
	served chan struct{}

	// addMu makes AddActor's check, call of Transport and insertion one step.
	addMu sync.Mutex

	mu       sync.Mutex
	closed   bool
	actors   map[string]*actor
	conns    map[net.Conn]*connInfo
	handlers sync.WaitGroup // Add under mu while !closed
	connsWG  sync.WaitGroup // one per connection goroutine

	closeOnce sync.Once
	closeErr  error
}

// Start listens on 127.0.0.1 on a free port and serves HTTPS, HTTP/1.1 and
// HTTP/2, with a serving certificate from a fresh CA (CAData). It forwards
// nothing for anyone until AddActor names an actor; until then every request
// goes to Options.Unauthenticated.
func Start(opts Options) (*Server, error) {
	if opts.Upstream == nil || opts.Upstream.Host == "" {
		return nil, errors.New("start the proxy: Options.Upstream needs the API server's URL")
	}
	if opts.Transport == nil {
		return nil, errors.New("start the proxy: Options.Transport is nil")
	}
	out := opts.Log
	if out == nil {
		out = io.Discard
	}
	unauthenticated := opts.Unauthenticated
	if unauthenticated == nil {
		unauthenticated = Refuse
	}
	cert, caPEM, err := newServingCert(time.Now())
	if err != nil {
		return nil, fmt.Errorf("start the proxy: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the proxy: %w", err)
	}

	upstream := *opts.Upstream
	logger := log.New(out, "racekit proxy: ", 0)
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		upstream:  &upstream,
		transport: opts.Transport,
		log:       logger,
		url:       "https://" + ln.Addr().String(),
		caPEM:     caPEM,
		cancel:    cancel,
		served:    make(chan struct{}),
		actors:    make(map[string]*actor),
		conns:     make(map[net.Conn]*connInfo),

		confine:       opts.Confine,
		impersonation: opts.Impersonation,
		refusals:      opts.Refusals,
	}
	s.refuse = s.forwarder(unauthenticated, "no actor")
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true) // client-go speaks HTTP/2 whenever it can.
	s.srv = &http.Server{
		Handler:     http.HandlerFunc(s.handle),
		TLSConfig:   &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		Protocols:   &protocols,
		ErrorLog:    logger,
		BaseContext: func(net.Listener) context.Context { return ctx },
		ConnContext: s.connContext,
		ConnState:   s.connState,
	}
	go func() {
		defer close(s.served)
		if err := s.srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
			logger.Printf("serve: %v", err)
		}
	}()
	return s, nil
}

// URL returns the proxy's base URL, https://127.0.0.1:PORT.
func (s *Server) URL() string { return s.url }

// CAData returns the PEM certificate of the CA that signed the proxy's
// serving certificate, for a client's trust store.
func (s *Server) CAData() []byte { return bytes.Clone(s.caPEM) }

// Close stops accepting connections, closes every open one (which ends watch
// streams and cancels the requests they carried upstream), and waits until
// every handler has returned. Close waits on the actors' RoundTrippers, so
// one that ignores its request's context keeps Close waiting. The
// RoundTrippers themselves, and their idle connections, stay the caller's.
// Close is idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		conns := make([]net.Conn, 0, len(s.conns))
		for c := range s.conns {
			conns = append(conns, c)
		}
		s.mu.Unlock()

		// Cancel every request, the upstream calls they wait on with them,
		// and those on hijacked connections (upgrades), which srv.Close
		// does not reach.
		s.cancel()
		s.closeErr = s.srv.Close()
		// srv.Close closes the connections it tracks; a connection accepted
		// while it ran may have escaped it, but not the proxy's own list (or
		// connContext, which closes it at once).
		for _, c := range conns {
			c.Close()
		}
		s.handlers.Wait()
		<-s.served
		s.connsWG.Wait()
	})
	return s.closeErr
}

// isClosed reports whether Close has begun.
func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// handle forwards r through the transport of the actor whose bearer token it
// carries, or through Unauthenticated.
func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	token, why := bearer(r.Header.Get("Authorization"))

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "racekit proxy: the proxy is closing")
		return
	}
	s.handlers.Add(1)
	var a *actor
	if token != "" {
		if a = s.actorByToken(token); a == nil {
			why = "unknown bearer token"
		}
	}
	s.mu.Unlock()
	defer s.handlers.Done()

	if c, ok := r.Context().Value(connKey{}).(*connInfo); ok {
		c.served.Add(1)
	}
	if a == nil {
		s.refuse.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), refusalKey{}, why)))
		return
	}
	if no := s.refusal(a.name, r); no != nil {
		a.refuse(w, r, no)
		return
	}
	a.forward.ServeHTTP(w, r)
}

// bearer returns the token of an "Authorization: Bearer TOKEN" header value,
// or why there is none. Like the API server, it takes the scheme in any case.
func bearer(authorization string) (token, why string) {
	if authorization == "" {
		return "", "no Authorization header"
	}
	scheme, token, _ := strings.Cut(authorization, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", "the Authorization header is not a bearer token"
	}
	if token = strings.TrimSpace(token); token == "" {
		return "", "empty bearer token"
	}
	return token, ""
}
