package proxy

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync/atomic"
)

// connInfo is what the proxy knows of one client connection.
type connInfo struct {
	// served counts the requests on the connection that reached a handler.
	served atomic.Int64

	// The fields below are touched only by ConnState hooks, which net/http
	// runs one at a time for a connection.

	// active is whether net/http has read bytes of a request it has not yet
	// finished with.
	active bool
	// readAt is served when net/http last read bytes of a request.
	readAt int64
}

// connKey carries a connection's connInfo in the contexts of its requests.
type connKey struct{}

// connContext registers a new connection, which Close will close and wait
// for. A connection that arrives while Close runs is closed at once.
func (s *Server) connContext(ctx context.Context, c net.Conn) context.Context {
	info := &connInfo{}
	s.mu.Lock()
	s.conns[c] = info
	closed := s.closed
	s.connsWG.Add(1) // Serve, which calls this, returns before Close waits.
	s.mu.Unlock()
	if closed {
		c.Close()
	}
	return context.WithValue(ctx, connKey{}, info)
}

// connState follows a connection's life. Its one job besides bookkeeping:
// net/http answers an HTTP/1 request it cannot parse with 400 on its own,
// without a handler and without a word to ErrorLog, so the proxy logs a
// connection that closes after bytes were read that no handler received.
func (s *Server) connState(c net.Conn, state http.ConnState) {
	s.mu.Lock()
	info := s.conns[c]
	closed := s.closed
	if state == http.StateClosed || state == http.StateHijacked {
		delete(s.conns, c)
	}
	s.mu.Unlock()
	if info == nil {
		return
	}

	switch state {
	case http.StateActive:
		info.active = true
		info.readAt = info.served.Load()
	case http.StateIdle:
		info.active = false
	case http.StateHijacked:
		// The handler owns the connection now, and Close cancels it.
		s.connsWG.Done()
	case http.StateClosed:
		if info.active && info.served.Load() == info.readAt && !closed && !isHTTP2(c) {
			s.log.Printf("%s sent what is not an HTTP request (net/http answered 400, unless the client hung up mid-request)", c.RemoteAddr())
		}
		s.connsWG.Done()
	}
}

// isHTTP2 reports whether c negotiated HTTP/2, whose server logs its own
// protocol errors.
func isHTTP2(c net.Conn) bool {
	tc, ok := c.(*tls.Conn)
	return ok && tc.ConnectionState().NegotiatedProtocol == "h2"
}
