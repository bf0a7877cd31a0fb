package record

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Trace is a scenario's recording: exchanges in the order they were sent,
// with hook firings and changes of what an actor is shown in between.
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

// Calls returns the exchanges of actor's verb on object, in order, in the
// scenario's namespace (Own). object is resource[/name[/subresource]], as
// in Call.Object.
func (t Trace) Calls(actor, verb, object string) []*Exchange {
	var out []*Exchange
	for _, x := range t.Own() {
		if x.Actor == actor && x.Verb == verb && x.Object() == object {
			out = append(out, x)
		}
	}
	return out
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

// known returns the symbol of v if v has one, without giving it one.
func (s *symbols) known(v string) (string, bool) {
	n, ok := s.names[v]
	return n, ok
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

// Row is one entry of a trace with its opaque values replaced by symbols:
// an exchange, a hook firing (Hook set, the rest empty), or a change of
// what an actor is shown (View set, the rest empty).
type Row struct {
	Seq     int         `json:"seq,omitempty"`
	Actor   string      `json:"actor,omitempty"`
	Verb    string      `json:"verb,omitempty"`
	Object  string      `json:"object,omitempty"`
	SentRV  string      `json:"sentRV,omitempty"`
	SentUID string      `json:"sentUID,omitempty"`
	Code    int         `json:"code,omitempty"`
	Reason  string      `json:"reason,omitempty"`
	GotRV   string      `json:"gotRV,omitempty"`
	GotUID  string      `json:"gotUID,omitempty"`
	Error   string      `json:"error,omitempty"`
	Hook    *HookFiring `json:"hook,omitempty"`
	View    *ViewChange `json:"view,omitempty"`
	Settled *Settled    `json:"settled,omitempty"`
	// Service is where a call outside the API server went.
	Service string `json:"service,omitempty"`
	// OtherNamespace is the namespace of a call that was not in the
	// scenario's (Exchange.Foreign), which the renderings show after the
	// object (Where); "" for a call in the scenario's namespace, and for
	// one on a cluster-scoped object, so that their renderings stay as
	// they were.
	OtherNamespace string `json:"otherNamespace,omitempty"`
	// ReasonUnknown says why a failed call's reason is unknown
	// (Exchange.ReasonUnknown); Reason is then empty.
	ReasonUnknown string `json:"reasonUnknown,omitempty"`

	// What the referee reads besides (its check.go), which no rendering
	// shows: the call's namespace; SentRV and GotRV as numbers (etcd
	// revisions, 0 when no number), to tell an older version from a
	// newer; that a failed call's Status named no reason
	// (Exchange.NoReason); and what a list or a watch showed the actor,
	// with its versions as symbols (Exchange.Shown).
	Namespace string  `json:"-"`
	SentRev   uint64  `json:"-"`
	GotRev    uint64  `json:"-"`
	NoReason  bool    `json:"-"`
	Shown     []Shown `json:"-"`
}

// Rows returns t with resourceVersions and UIDs replaced by symbols (rv1,
// uid1, ...) in order of first appearance, and with timestamps, durations and
// the scenario's own namespace dropped (another is kept: OtherNamespace).
// Every rendering of a trace (Normalize, the timeline,
// Mermaid, JSON) starts from these rows, so they agree.
func (t Trace) Rows() []Row {
	rvs, uids := &symbols{prefix: "rv"}, &symbols{prefix: "uid"}
	history := map[string]bool{} // list and watch resourceVersions seen
	rows := make([]Row, 0, len(t))
	for _, e := range t {
		if e.Hook != nil {
			h := *e.Hook
			// An action's arguments come expanded: $RV or $UID in the
			// script shows here as the raw value. Values the trace has
			// already named get their names, so the line reads the same
			// on every run.
			h.Action = replaceWords(h.Action, func(w string) string {
				if n, ok := rvs.known(w); ok {
					return n
				}
				if n, ok := uids.known(w); ok {
					return n
				}
				if history[w] {
					return historyRV(w)
				}
				return w
			})
			rows = append(rows, Row{Hook: &h})
			continue
		}
		if e.View != nil {
			rows = append(rows, viewRow(*e.View))
			continue
		}
		if e.Settled != nil {
			s := *e.Settled
			rows = append(rows, Row{Settled: &s})
			continue
		}
		x := e.Exchange
		r := Row{Seq: x.Seq, Actor: x.Actor, Verb: x.Verb, Object: x.Object(),
			SentUID: uids.name(x.SentUID), Code: x.Code, Reason: x.Reason, Error: x.Err, Service: x.Service,
			ReasonUnknown: x.ReasonUnknown, Namespace: x.Namespace, NoReason: x.NoReason}
		if x.Foreign {
			r.OtherNamespace = x.Namespace
		}
		if x.Verb == "list" || x.Verb == "watch" {
			r.SentRV, r.GotRV = historyRV(x.SentRV), historyRV(x.GotRV)
			history[x.SentRV], history[x.GotRV] = true, true
		} else {
			r.SentRV, r.GotRV = rvs.name(x.SentRV), rvs.name(x.GotRV)
			r.SentRev, r.GotRev = revision(x.SentRV), revision(x.GotRV)
		}
		if x.Verb == "create" {
			// A UID is born on create; elsewhere it adds only noise.
			r.GotUID = uids.name(x.GotUID)
		}
		rows = append(rows, r)
	}
	// What lists and watches showed comes last, so that the exchanges'
	// symbols are the same as without it: a version already named keeps
	// its name, any other gets the next.
	for i, e := range t {
		if e.Exchange == nil || len(e.Exchange.Shown) == 0 {
			continue
		}
		shown := make([]Shown, len(e.Exchange.Shown))
		for j, s := range e.Exchange.Shown {
			s.Rev, s.RV = revision(s.RV), rvs.name(s.RV)
			shown[j] = s
		}
		rows[i].Shown = shown
	}
	return rows
}

// revision returns a resourceVersion as the etcd revision it is, or 0 when
// it is no number: what the referee compares to tell older from newer,
// which a client may not do, but the referee of an etcd-backed server may.
func revision(rv string) uint64 {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// replaceWords returns s with each word (a run of letters, digits and
// dashes, which holds a whole resourceVersion or UID) replaced by f(word).
func replaceWords(s string, f func(string) string) string {
	var b strings.Builder
	word := func(r rune) bool {
		return r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	for len(s) > 0 {
		i := strings.IndexFunc(s, word)
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i:]
		j := strings.IndexFunc(s, func(r rune) bool { return !word(r) })
		if j < 0 {
			j = len(s)
		}
		b.WriteString(f(s[:j]))
		s = s[j:]
	}
	return b.String()
}

// historyRV renders a resourceVersion that a list or a watch sends or
// gets. It is a point in the history of the whole etcd store, not a version
// of one object, and whether it equals another value of the trace depends on
// what the rest of the cluster wrote meanwhile. So it never becomes a
// symbol: it renders as "rv*", and "0" and values that are no revision at
// all ("abc") render as they are.
func historyRV(v string) string {
	if n, err := strconv.ParseUint(v, 10, 64); err != nil || n == 0 {
		return v
	}
	return "rv*"
}

// Sent renders what the request pinned: "sent rv3", "sent rv3 uid1".
func (r Row) Sent() string {
	var s []string
	for _, v := range []string{r.SentRV, r.SentUID} {
		if v != "" {
			s = append(s, "sent "+v)
		}
	}
	return strings.Join(s, " ")
}

// Status renders the answer: "409 Conflict", "409 (reason unknown: body
// in application/yaml not decoded)", or "error" without one.
func (r Row) Status() string {
	if r.Error != "" || r.Code == 0 {
		return "error"
	}
	if r.Reason == "" && r.ReasonUnknown != "" {
		return strconv.Itoa(r.Code) + " (reason unknown: " + r.ReasonUnknown + ")"
	}
	return strconv.Itoa(r.Code) + " " + r.Reason
}

// Got renders what the response carried: "rv4", "rv1 uid1".
func (r Row) Got() string {
	return strings.TrimSpace(r.GotRV + " " + r.GotUID)
}

// String renders a hook firing the way traces show it.
func (h HookFiring) String() string {
	return fmt.Sprintf("hook %d fired (%s): %s", h.ID, h.Trigger, h.Action)
}

// Normalize renders t one line per entry, from Rows: the same scenario
// renders the same, byte for byte, on every run.
//
//	4 controller get    deployments/web            -> 200 OK       rv3
//	    hook 1 fired (after controller get deployments/web 1st): annotate bob deployments/web team=blue
//	    view: hold controller deployments
//	7 controller update deployments/web  sent rv3  -> 409 Conflict
func (t Trace) Normalize() string {
	rows := t.Rows()
	var w [6]int
	for _, r := range rows {
		if r.IsCall() {
			for i, s := range []string{strconv.Itoa(r.Seq), r.Actor, r.Verb, r.Where(), r.Sent(), r.Status()} {
				w[i] = max(w[i], len(s))
			}
		}
	}
	var b strings.Builder
	for _, r := range rows {
		if r.Hook != nil {
			fmt.Fprintf(&b, "%*s %s\n", w[0]+1, "", r.Hook)
			continue
		}
		if r.View != nil {
			fmt.Fprintf(&b, "%*s view: %s\n", w[0]+1, "", r.View)
			continue
		}
		if r.Settled != nil {
			fmt.Fprintf(&b, "%*s idle: %s\n", w[0]+1, "", r.Settled)
			continue
		}
		line := fmt.Sprintf("%*d %-*s %-*s %-*s %-*s -> %-*s %s", w[0], r.Seq, w[1], r.Actor, w[2], r.Verb, w[3], r.Where(), w[4], r.Sent(), w[5], r.Status(), r.Got())
		b.WriteString(strings.TrimRight(line, " ") + "\n")
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
