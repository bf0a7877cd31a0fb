// Package controller is racekit's reference controller: it turns a WebApp
// into a Deployment of the same name, and it follows every rule of
// optimistic concurrency, so that each race scenario shows a correct
// controller surviving the race.
//
// The rules it keeps:
//
//   - Every read is a GET from the API server, never from a cache, and a
//     write carries the resourceVersion of that read.
//   - A write that can conflict runs inside retry.RetryOnConflict, and each
//     attempt reads the object again and decides again. A stale object is
//     never written twice.
//   - Retries are bounded. When they run out, the Conflict is returned to the
//     caller as it is.
//   - The controller touches only what it controls: a Deployment whose
//     controlling owner is another object is refused, not updated.
//
// Reconcile is synchronous and knows nothing of tests. The racekit harness
// races it by wrapping the transport of the rest.Config its client is built
// from; the controller's code is the same in tests and in production.
package controller
