// Package controller is racekit's reference controller: it turns a WebApp
// into a Deployment of the same name and a record in an external registry,
// and it follows every rule of optimistic concurrency, so that each race
// scenario shows a correct controller surviving the race.
//
// The rules it keeps:
//
//   - Every read is a GET from the API server, never from a cache, and a
//     write carries the resourceVersion of that read. Informers only wake
//     the controller up.
//   - A write that can conflict runs inside retry.RetryOnConflict, and each
//     attempt after a conflict reads the object again and decides again. A
//     stale object is never written twice.
//   - Retries are bounded. When they run out, the Conflict is returned to
//     the caller, wrapped so that apierrors.IsConflict still sees it, and
//     the run loop requeues the key. Other errors are never retried inside
//     a reconcile.
//   - A reconcile acts on the spec it read first. Status confirms only that
//     spec: when the generation moved on meanwhile, Reconcile confirms
//     nothing and returns ErrStale.
//   - The side effect outside the cluster, registration, runs outside any
//     retry and is idempotent by name and uid, so it happens once per
//     WebApp lifetime. A finalizer keeps a deleted WebApp until its record
//     is gone.
//   - The controller touches only what it controls: a Deployment whose
//     controlling owner is another object, or that lacks the managed-by
//     label, is refused, not updated; so is a registry name that belongs to
//     another uid. Both set the Ready condition to False with a reason.
//
// Each rule has a teaching variant that breaks it on purpose (package
// teaching names them), so that a race scenario can show what the rule is
// for. Only NewTeachingVariant builds one; New and Run never do.
//
// Reconcile is synchronous and knows nothing of tests. The racekit harness
// races it by wrapping the transport of the rest.Config its client is built
// from, and of the registry client's http.Client; the controller's code is
// the same in tests and in production. Run adds the informers, the work
// queue and the metrics that a deployed controller needs; the racekit
// controller command calls it.
package controller
