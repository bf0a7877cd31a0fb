// Package running races controllers that run on their own: start (a
// registered controller's long-running form, in process), spawn (any
// program, as a process whose calls come in through the racing proxy),
// await, idle, halt, crash and restart, and controller-manager
// (kube-controller-manager, spawned).
//
// Its contract:
//
//   - Every call a running controller makes passes through the scenario's
//     hooks and recorder, so a hook blocks the call that fired it until its
//     action is done: the race is staged at the same moment on every run.
//   - Waits (await, idle) wake on the recorder's changes, never on a poll,
//     and are bounded; each fails, saying why, as soon as nothing could make
//     the call it waits for.
//   - A crash kills a life at the moment a hook chooses: from then on its
//     calls fail (one held at a before point is not sent, one held at an
//     after point loses its answer), by a check outside the hooks.
//   - Nothing outlives its scenario: what still runs is halted at the end,
//     and a spawned process runs under a reaper of its own
//     (internal/reaper), which kills every process it started, in its
//     process group or not, once it has exited, and all of them when
//     this process ends first, however it ends.
//
// It is an extension of the scenario language, and keeps its state itself.
package running
