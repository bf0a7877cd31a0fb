package controllers

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/harness/referee"
)

// The rules of optimistic concurrency, checked on the wire: the harness's
// referee. A reconcile that fails names the rules its calls broke, and the
// assertions rereads and attempts are built on the same checks, so that a
// workshop attendee reads which rule broke, not only which count is off.
var refereeCommands = []*language.Command{
	{
		Name: "rereads", Args: "ACTOR RESOURCE/NAME[/SUB]", Group: "assert", MinArgs: 2, MaxArgs: 2,
		Summary: "assert that ACTOR retried each write to the object that got 409 Conflict by reading the object again",
		Detail:  "assert that ACTOR retried a write to the object that got 409 Conflict by reading it again: each write it sent to the object after a 409 (an update, a patch or a delete, by the resourceVersion it carries), in a reconcile or not, carried a version ACTOR had been shown for that object (by an answer about it, a list item or a watch event of it), not the refused one, and none older than one it had seen, as recorded on the wire; with no 409, or neither a read nor a write after it, there is no retry to judge, and it fails",
		Run:     runRereads,
	},
	{
		Name: "referee", Args: "ACTOR", Group: "assert", MinArgs: 1, MaxArgs: 1,
		Summary: "assert that ACTOR's calls broke none of the rules of optimistic concurrency a failed reconcile names",
		Detail:  "assert that ACTOR's calls broke none of the rules a failed reconcile names: in each of its reconciles (or, if it never reconciled, in all its calls), no stale object re-sent, no made-up or stale resourceVersion after a 409 (a version it was not shown for that object, or the refused one, or one older than it had seen; updates, patches and delete preconditions alike), no retry of a non-conflict, no update without a resourceVersion, no side effect called twice, no retry past its bound, as read on the wire; and, for its last reconcile, none of its controller's own rules about what the objects hold now (the reference controller's: a status that confirms a generation it did not act on, a write to a Deployment it does not control): the invariant an explore line most often needs",
		Run:     runReferee,
	},
	{
		Name: "attempts", Args: "ACTOR VERB RESOURCE/NAME[/SUB] COUNT [since=MARK]", Group: "assert", MinArgs: 4, MaxArgs: 5,
		Summary: "assert that ACTOR sent COUNT VERB calls on the object, whatever the answers, as recorded on the wire",
		Detail:  "assert that ACTOR sent COUNT VERB calls on the object (or on the registry: create registrations/NAME), whatever the answers, as recorded on the wire; since=MARK counts only the calls sent after mark MARK was taken (a restarted name's new life); when the count is off, say which rule the extra calls broke",
		Run:     runAttempts,
	},
}

// wireFindings checks the calls actor made from seq from to seq to (0 for
// the end of the trace) in rows by the wire rules (referee.Check); with
// oneReconcile, which says the calls are one reconcile's, by those of a
// reconcile too.
func wireFindings(sc *language.Scenario, rows []record.Row, actor string, from, to int, oneReconcile bool) []referee.Finding {
	c := referee.Check{Actor: actor, From: from, To: to, OneReconcile: oneReconcile,
		Steps: language.ZeroDelayRetry().Steps, SideEffect: sc.Service}
	return c.Findings(rows)
}

// brokenRules returns the rules span broke, on the wire and in what it
// left, each once per object: no rules when it broke none.
func brokenRules(sc *language.Scenario, span Span) referee.Named {
	fs := wireFindings(sc, sc.Trace().Rows(), span.Actor, span.From, span.To, true)
	if c := stateOf(sc).registry[span.Controller]; c != nil && c.Check != nil {
		fs = append(fs, c.Check(sc, span)...)
	}
	return referee.Name(fs, "")
}

// spanFindings returns the wire findings of every reconcile actor ran, with
// the rules that hold within one reconcile, or of the whole trace when actor
// never reconciled. attempts explains a count with them.
func spanFindings(sc *language.Scenario, rows []record.Row, actor string) []referee.Finding {
	st := stateOf(sc)
	st.mu.Lock()
	spans := append([]Span(nil), st.reconciles...)
	st.mu.Unlock()
	// rows are the whole trace's, once: their symbols are the same
	// whichever span a finding quotes.
	var out []referee.Finding
	seen := false
	for _, s := range spans {
		if s.Actor == actor {
			seen = true
			out = append(out, wireFindings(sc, rows, actor, s.From, s.To, true)...)
		}
	}
	if !seen {
		out = wireFindings(sc, rows, actor, 0, 0, false)
	}
	return out
}

// runRereads judges what actor sent about the object after a 409 Conflict
// of its write, wherever it was sent: in a reconcile, in another, or by the
// script itself as that actor (a reconcile's span would miss the last).
// Something must follow the first 409, a read of the object or a write to
// it, or there is no retry to judge; a retry that reads the object and
// finds nothing left to write is judged by that read.
func runRereads(sc *language.Scenario, inv language.Invocation) error {
	actor := inv.Args[0]
	obj, err := sc.WireObject(inv.Args[1])
	if err != nil {
		return err
	}
	tr := sc.Trace()
	var conflicted *record.Exchange // the first write refused with 409 Conflict
	retried := false                // a read or a write followed it
	for _, x := range tr.Own() {
		if x.Actor != actor {
			continue
		}
		write := x.Object() == obj && record.WriteVerbs[x.Verb]
		read := x.Verb == "get" && (x.Object() == obj || x.Object() == referee.BaseObject(obj)) && (x.Code == 200 || x.Code == 404)
		if conflicted != nil && (write || read) {
			retried = true
		}
		if conflicted == nil && write && x.Conflicted() {
			conflicted = x
		}
	}
	var rereads []referee.Finding
	for _, f := range wireFindings(sc, tr.Rows(), actor, 0, 0, false) {
		if referee.RereadRules[f.Rule] {
			rereads = append(rereads, f)
		}
	}
	broken := referee.Name(rereads, obj)
	switch {
	case conflicted == nil:
		return fmt.Errorf("no write of %s to %s was refused with 409 Conflict, so there is no retry to check: the race did not happen\n%s", actor, obj, tr.Tail(20))
	case !retried:
		return fmt.Errorf("%s neither read nor wrote %s after #%d %s was refused with 409 Conflict, so there is no retry to judge: the write was given up, not retried\n%s",
			actor, obj, conflicted.Seq, conflicted.Verb, tr.Tail(20))
	case len(broken.Findings()) > 0:
		return broken.Wrap(fmt.Errorf("%s did not read %s again before retrying it:%s\n%s", actor, obj, broken, tr.Tail(20)))
	}
	return nil
}

// runAttempts counts actor's VERB calls on the object sent since the mark
// since= names (every call without it), whatever their answers.
func runAttempts(sc *language.Scenario, inv language.Invocation) error {
	args, opts, err := language.SplitOptions(inv.Args, []string{language.SinceOption})
	if err != nil {
		return err
	}
	if len(args) != 4 {
		return language.UsageError("want ACTOR VERB RESOURCE/NAME[/SUB] COUNT [since=MARK], got %q", strings.Join(inv.Args, " "))
	}
	after, err := sc.Since(opts)
	if err != nil {
		return err
	}
	actor, verb := args[0], args[1]
	if !slices.Contains(referee.CallVerbs, verb) {
		return language.UsageError("unknown verb %q%s; attempts counts %s", verb, language.Suggest(verb, referee.CallVerbs), strings.Join(referee.CallVerbs, ", "))
	}
	obj, err := sc.WireObject(args[2])
	if err != nil {
		return err
	}
	want, err := strconv.Atoi(args[3])
	if err != nil || want < 0 {
		return language.UsageError("bad count %q: want a whole number", args[3])
	}
	tr := sc.Trace()
	got := 0
	for _, x := range tr.Own() {
		if x.Seq > after && x.Actor == actor && x.Verb == verb && x.Object() == obj {
			got++
		}
	}
	if got != want {
		why := referee.Name(spanFindings(sc, tr.Rows(), actor), obj)
		return why.Wrap(fmt.Errorf("%s sent %d %s %s%s, want %d%s\n%s", actor, got, verb, obj, language.SinceText(opts), want, why, tr.Tail(20)))
	}
	return nil
}

func runReferee(sc *language.Scenario, inv language.Invocation) error {
	st := stateOf(sc)
	actor := inv.Args[0]
	if !language.ValidActor(actor) {
		return language.UsageError("bad actor name %q", actor)
	}
	tr := sc.Trace()
	calls := 0
	for _, x := range tr.Own() {
		if x.Actor == actor {
			calls++
		}
	}
	if calls == 0 {
		return fmt.Errorf("%s made no call, so there is nothing to referee\n%s", actor, tr.Tail(20))
	}
	fs := spanFindings(sc, tr.Rows(), actor)
	// A controller's own rules judge what its objects hold now: once, for
	// its last reconcile.
	st.mu.Lock()
	var last *Span
	for i := range st.reconciles {
		if st.reconciles[i].Actor == actor {
			last = &st.reconciles[i]
		}
	}
	st.mu.Unlock()
	if last != nil {
		if c := stateOf(sc).registry[last.Controller]; c != nil && c.Check != nil {
			fs = append(fs, c.Check(sc, *last)...)
		}
	}
	if broken := referee.Name(fs, ""); len(broken.Findings()) > 0 {
		return broken.Wrap(fmt.Errorf("%s broke the rules:%s\n%s", actor, broken, tr.Tail(20)))
	}
	return nil
}
