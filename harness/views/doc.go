// Package views owns what any actor is shown at the wire: hold and release
// of an actor's watch events (or, for a registered cached controller, of
// the events its cache is fed, which package controllers holds), and mark,
// which names the store's revision now for a later hold at=.
//
// Its contract:
//
//   - Every actor's transport passes its watch streams through a gate,
//     below the recorder, and its lists and watch-lists past a rewriter,
//     above it (language.Extension.Transport): the trace shows a request as
//     sent and an event as shown only once the gate lets it through, for
//     calls made in process, by a started controller and through the
//     racing proxy alike.
//   - A held gate passes each event on whole, in order, once released; a
//     relist ends the stream with 410 Expired as kube-apiserver does. Its
//     goroutines wait on channels, never on a poll.
//   - A hold is the scenario's, not a process's: it holds across an
//     actor's lives, and a hold at= serves the actor's next list as of the
//     past, exactly, or fails saying why (a compacted revision).
//   - A hold that failed, or that nothing met, fails the scenario at its
//     end, naming the hold's line; an await of the actor fails at once
//     (HoldFailed).
//   - The layers above ask, never reach in: which resources a hold keeps
//     back from an actor (Held), a hold at= of their own (HoldAt); a mark's
//     place in the trace is noted with the language (Scenario.NoteMark),
//     whose since= counts the calls after it. What runs under a name is theirs:
//     Extension is told how a name maps to its actor (Names).
//
// It is an extension of the scenario language, and keeps its state itself.
// It must never know a process or explore.
package views
