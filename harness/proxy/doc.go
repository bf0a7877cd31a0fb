// Package proxy races a controller that runs as its own process, in any
// language, without changing it: the controller gets a kubeconfig that
// points at this proxy, and every request it makes passes through an
// http.RoundTripper that the harness supplies for its actor.
//
// The contract, in short:
//
//   - Start serves HTTPS on 127.0.0.1, HTTP/1.1 and HTTP/2, with a serving
//     certificate from a CA made for this proxy alone (CAData).
//   - AddActor mints a random bearer token for an actor and asks
//     Options.Transport, once, for the RoundTripper that carries that actor's
//     requests to the API server, authenticated as the actor.
//   - The bearer token alone decides the actor. The proxy removes the
//     Authorization header before the request goes on; no other header
//     chooses an actor.
//   - A request without an actor's token goes to Options.Unauthenticated,
//     which by default is Refuse: 401 and a metav1.Status, sent by the proxy
//     itself.
//   - Path, query and body reach the API server unchanged, but for
//     Options.Confine: a LIST or WATCH of a namespaced resource that the
//     API server would serve across all namespaces (an empty namespace
//     segment included) is sent as one of the confining namespace, whose
//     answer has the same shape. Responses stream back as they come: each watch
//     event reaches the client when the API server sends it.
//   - The proxy refuses, itself, an actor's request that carries
//     impersonation headers (403, unless Options.Impersonation allows the
//     actor) and one that asks to upgrade its connection, as exec, attach
//     and port-forward do (501: no container here runs a process), each with a
//     metav1.Status that says why, through Options.Refusals, which records
//     it.
//   - An upstream error becomes 502 with a metav1.Status; the proxy's own
//     errors, and requests it cannot parse, go to Options.Log.
//   - Close ends every connection, watches included, cancels what they
//     carried upstream, and returns when every handler has returned.
//
// The package knows nothing of the harness or of hooks: recording and
// hooks live in the RoundTrippers it is given.
package proxy
