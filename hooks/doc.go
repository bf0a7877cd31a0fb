// Package hooks makes races deterministic by running code at chosen points of
// an HTTP conversation with the API server.
//
// The contract, in short:
//
//   - A Hook names a Point (before the request is sent, or after the response
//     arrives), a Matcher over the API call (actor, verb, resource, name,
//     and the namespace it keeps to, if any) and an occurrence (the Nth
//     matching call since the hook was armed, or every one).
//   - A Transport wraps an actor's http.RoundTripper. When a call matches an
//     armed hook, the hook's action runs synchronously, on the caller's
//     goroutine, before the call proceeds or returns. Nothing else decides the
//     order of a race: there are no sleeps and no polling.
//   - A Call is read from the request as the API server reads it
//     (ParseRequest); a Transport made by WrapService reads the calls to a
//     service outside the API server by their paths instead
//     (ParseServiceRequest). A request is parsed once on its way: the
//     first transport puts its Call in the request's context, and those
//     further on read it there (Parsed).
//   - A Set holds the hooks of one scenario and is shared by the transports of
//     all its actors. Hooks fire in the order they were armed.
//
// Because hooks live in a RoundTripper, racing a controller needs no change to
// its code: any client-go or controller-runtime client built from a
// rest.Config can be raced by wrapping that config's transport. Production
// code never installs a Transport.
package hooks
