package harness

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Trace is a scenario's recording: exchanges in the order they were sent,
// with hook firings in between.
type Trace []Entry

// Exchanges returns the exchanges of t, without the hook firings.
func (t Trace) Exchanges() []*Exchange {
	var out []*Exchange
	for _, e := range t {
		if e.Exchange != nil {
			out = append(out, e.Exchange)
		}
	}
	return out
}

// Count returns how many exchanges of actor's verb on object got code.
// object is resource[/name[/subresource]], as in Call.Object.
func (t Trace) Count(actor, verb, object string, code int) int {
	n := 0
	for _, x := range t.Exchanges() {
		if x.Actor == actor && x.Verb == verb && x.Object() == object && x.Code == code {
			n++
		}
	}
	return n
}

// RoundTrips returns the sum of the exchanges' durations: the time the
// server and the network took, which no harness can go below.
func (t Trace) RoundTrips() time.Duration {
	var d time.Duration
	for _, x := range t.Exchanges() {
		d += x.Duration
	}
	return d
}

// symbols replaces opaque values by names in order of first appearance, so
// that two runs of one scenario render the same.
type symbols struct {
	prefix string
	names  map[string]string
}

func (s *symbols) name(v string) string {
	if v == "" {
		return ""
	}
	if s.names == nil {
		s.names = map[string]string{}
	}
	n, ok := s.names[v]
	if !ok {
		n = s.prefix + strconv.Itoa(len(s.names)+1)
		s.names[v] = n
	}
	return n
}

// Normalize renders t one line per entry, with resourceVersions and UIDs
// replaced by symbols (rv1, uid1, ...) in order of first appearance and with
// timestamps, durations and namespaces dropped. The same scenario renders the
// same, byte for byte, on every run.
//
//	4 controller get    deployments/web            -> 200 OK       rv3
//	    hook 1 fired (after controller get deployments/web 1st): annotate bob deployments/web team=blue
//	7 controller update deployments/web  sent rv3  -> 409 Conflict
func (t Trace) Normalize() string {
	rvs, uids := &symbols{prefix: "rv"}, &symbols{prefix: "uid"}
	type row struct{ seq, actor, verb, object, sent, status, got string }
	var rows []*row
	var lines []any // *row or string
	for _, e := range t {
		if h := e.Hook; h != nil {
			lines = append(lines, fmt.Sprintf("hook %d fired (%s): %s", h.ID, h.Trigger, h.Action))
			continue
		}
		x := e.Exchange
		r := &row{seq: strconv.Itoa(x.Seq), actor: x.Actor, verb: x.Verb, object: x.Object()}
		var sent []string
		if x.SentRV != "" {
			sent = append(sent, "sent "+rvs.name(x.SentRV))
		}
		if x.SentUID != "" {
			sent = append(sent, "sent "+uids.name(x.SentUID))
		}
		r.sent = strings.Join(sent, " ")
		if x.Err != "" {
			r.status = "error"
		} else {
			r.status = strconv.Itoa(x.Code) + " " + x.Reason
		}
		var got []string
		if x.GotRV != "" {
			got = append(got, rvs.name(x.GotRV))
		}
		if x.GotUID != "" && x.Verb == "create" {
			got = append(got, uids.name(x.GotUID))
		}
		r.got = strings.Join(got, " ")
		rows = append(rows, r)
		lines = append(lines, r)
	}
	var w [6]int
	for _, r := range rows {
		for i, s := range []string{r.seq, r.actor, r.verb, r.object, r.sent, r.status} {
			w[i] = max(w[i], len(s))
		}
	}
	var b strings.Builder
	for _, l := range lines {
		switch l := l.(type) {
		case string:
			fmt.Fprintf(&b, "%*s %s\n", w[0]+1, "", l)
		case *row:
			line := fmt.Sprintf("%*s %-*s %-*s %-*s %-*s -> %-*s %s", w[0], l.seq, w[1], l.actor, w[2], l.verb, w[3], l.object, w[4], l.sent, w[5], l.status, l.got)
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
	}
	return b.String()
}

// Tail returns the last n lines of the normalized trace, for failure
// messages.
func (t Trace) Tail(n int) string {
	lines := strings.Split(strings.TrimRight(t.Normalize(), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
