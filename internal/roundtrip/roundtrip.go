// Package roundtrip turns a function into an http.RoundTripper, as
// http.HandlerFunc turns one into a Handler: for the small wrappers each
// layer puts around an actor's transport.
package roundtrip

import "net/http"

// Func is an http.RoundTripper that calls itself.
type Func func(*http.Request) (*http.Response, error)

// RoundTrip calls f(req).
func (f Func) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
