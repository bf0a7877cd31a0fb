// Package record records every call of a scenario's actors on the wire,
// and renders what it recorded.
//
// Its contract:
//
//   - The Recorder sits in each actor's transport: a request is recorded as
//     it is sent, its answer as it arrives, decoded from JSON, YAML,
//     protobuf or CBOR; a body it cannot decode leaves the reason unknown,
//     never guessed from the status line. What a read showed its actor (a
//     list's items, each watch event, as the actor's client reads it) is
//     recorded too.
//   - A Trace is data: its Rows replace resourceVersions and UIDs by symbols
//     in order of first appearance, so that the same race renders the same
//     on every run, and every rendering (Normalize, Timeline, Mermaid,
//     JSON) starts from them.
//   - A call in a namespace other than the one SetNamespace names is
//     Foreign: every rendering shows its namespace (only then, so that a
//     trace of the scenario's own calls renders as before), and Own and
//     Calls leave it out of what the layers above count.
//   - The Recorder also knows what the trace says each object holds now
//     (LastKnown), what each object's last write left (Written), and which
//     calls are in flight (InFlight), for the layers above to read instead
//     of copying the trace.
//
// It knows no scenario, no command and no controller.
package record
