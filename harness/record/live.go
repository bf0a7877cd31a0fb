package record

import (
	"fmt"
	"strings"
)

// LiveLine renders an answered exchange as racekit run's traces render a
// row (Trace.Normalize), with the real resourceVersions instead of
// symbols: a symbol's number would depend on calls not answered yet.
// Columns have fixed widths, since the calls to come are unknown; a long
// value pushes the rest of its line along.
func (x *Exchange) LiveLine() string {
	r := Row{Seq: x.Seq, Actor: x.Actor, Verb: x.Verb, Object: x.Object(), SentRV: x.SentRV,
		Code: x.Code, Reason: x.Reason, ReasonUnknown: x.ReasonUnknown, GotRV: x.GotRV, Error: x.Err}
	got := r.Got()
	if x.Err != "" {
		got = x.Err // a transport error got no answer, and nothing else
	}
	line := fmt.Sprintf("%4d %-10s %-6s %-28s %-10s -> %-16s %s", r.Seq, r.Actor, r.Verb, r.Object, r.Sent(), r.Status(), got)
	return strings.TrimRight(line, " ") + "\n"
}
