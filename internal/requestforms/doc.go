// Package requestforms generates the requests that Kubernetes clients send
// to kube-apiserver, in the forms each client builds them and in malformed
// ones, for the property tests of the code that reads a request's path:
// hooks.ParseRequest, held to the API server's own RequestInfo, and the
// racing proxy's confinement, held to what a real API server answers.
//
// The contract, in short:
//
//   - A Space lists the values of each dimension of a request: resources,
//     namespace forms (every namespace, an empty namespace, named ones,
//     malformed ones), objects, the deprecated verb prefixes, methods,
//     queries and Accept headers. Queries, Accepts and NamespaceForms hold
//     what each client sends: client-go, controller-runtime, the Python
//     and JavaScript clients, kubectl, and malformed values.
//   - Corpus combines them: every path form with every method, every GET
//     with every query; and, when the space asks for it, each path
//     malformed in every way Malformations knows (empty segments, . and
//     .., percent-encoding, doubled and trailing slashes, upper case),
//     with the method, query and Accept chosen by a seeded generator.
//   - The corpus is the same on every run, in the same order, with no
//     request twice; each Request says how it was made (Form), for a
//     failure message.
//
// The package knows nothing of racekit: it only writes requests down.
package requestforms
