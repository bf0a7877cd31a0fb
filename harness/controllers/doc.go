// Package controllers races registered controllers one reconcile at a
// time: reconcile, settle and result, a reconcile's crash (CrashReconcile,
// which package running's crash command calls), the informer caches it
// feeds and holds (HoldCache, ReleaseCache: the cached forms of hold and
// release, which package views owns), and the referee's assertions over
// each reconcile's span of the trace.
//
// Its contract:
//
//   - A Controller is registered by name; each actor that reconciles it in a
//     scenario gets an Instance of its own (client, cache, reconciler), as
//     a second replica would.
//   - A cached controller reads through informers whose feed the harness
//     controls: before each reconcile, after each hook action and after
//     each of its own writes, its cache holds every write the trace shows,
//     so that what it reads never depends on when an event lands; a hold
//     keeps a resource's events back on purpose, and the trace shows it.
//   - A reconcile has a budget of calls: one that retries without bound is
//     stopped, and a crash hook kills it at a chosen call.
//
// It is an extension of the scenario language, and keeps its state itself.
package controllers
