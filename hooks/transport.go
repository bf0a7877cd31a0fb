package hooks

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// Transport is an http.RoundTripper that fires the hooks of a Set around each
// call an actor makes. Wrap an actor's rest.Config with it (rest.Config.Wrap);
// production code never does.
type Transport struct {
	// Actor names the client whose calls pass through this transport.
	Actor string
	// Hooks is the scenario's set, shared with the other actors.
	Hooks *Set
	// Next sends the request.
	Next http.RoundTripper
	// Service is set when the calls go to a service outside the API
	// server, whose paths ParseServiceRequest reads; otherwise
	// ParseRequest reads them as the API server does. Either way a
	// transport before this one may have parsed the call already
	// (Parsed).
	Service bool
}

// Wrap returns a function for rest.Config.Wrap that puts a Transport for
// actor in front of the config's transport.
func Wrap(actor string, set *Set) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return &Transport{Actor: actor, Hooks: set, Next: next}
	}
}

// WrapService is Wrap for a client of a service outside the API server,
// such as a registry a controller calls: its calls are read as
// ParseServiceRequest reads them.
func WrapService(actor string, set *Set) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return &Transport{Actor: actor, Hooks: set, Next: next, Service: true}
	}
}

// RoundTrip fires Before hooks, sends req, then fires After hooks before it
// returns the response to the caller.
//
// A call whose context was aborted (Abort) fails at once, unsent; one
// aborted by a Before hook is not sent; one aborted by an After hook loses
// its answer.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if err := aborted(ctx); err != nil {
		return nil, err
	}
	parse := Parsed
	if t.Service {
		parse = ParsedService
	}
	req, call := parse(t.Actor, req)
	t.Hooks.Fire(Event{Point: Before, Call: call, Context: ctx})
	if err := aborted(ctx); err != nil {
		return nil, err
	}

	resp, err := t.Next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	e := Event{Point: After, Call: call, Code: resp.StatusCode, Context: ctx}
	if call.Verb != "watch" && t.Hooks.wants(After, call) {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read response to %s: %w", call, err)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		e.Body = body
	}
	t.Hooks.Fire(e)
	if err := aborted(ctx); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}
