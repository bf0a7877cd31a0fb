// Package harness is the façade over racekit's harness: what racekit's
// public API (package racekit) and its command (cmd/racekit) use, and
// nothing they do not. It composes the layers below it, each a package of
// its own with one idea (docs/architecture.md):
//
//   - controlplane: kube-apiserver and etcd, once per process;
//   - record: the recorder of every call on the wire, and the trace;
//   - referee: the rules of optimistic concurrency, as a pure function of
//     the trace's rows;
//   - language: the scenario language: Scenario, commands, the script
//     runner, and the extension points the layers above plug into;
//   - semantics, controllers, running: extensions: the API-semantics
//     commands, controllers raced one reconcile at a time, and controllers
//     that run on their own (with the racing proxy, package proxy);
//   - explore: every moment of a workload;
//   - selfcheck: the checks of the oracles themselves (failing twins,
//     metamorphic noise).
//
// Everything a scenario asserts about the wire comes from the recorder,
// which sits in each actor's transport: a 409 in a trace is a 409 the API
// server sent. The order of a race comes from hook points (package hooks)
// alone; nothing here sleeps or polls.
package harness
