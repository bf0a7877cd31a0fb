package harness

import (
	"fmt"
	"strconv"
	"strings"
)

// The rules of optimistic concurrency, checked on the wire: the harness's
// referee. A reconcile that fails names the rules its calls broke, and the
// assertions rereads and attempts are built on the same checks, so that a
// workshop attendee reads which rule broke, not only which count is off.
func init() {
	register(&Command{
		Name: "rereads", Args: "ACTOR RESOURCE/NAME[/SUB]", Group: "assert", MinArgs: 2, MaxArgs: 2,
		Summary: "assert that ACTOR retried a write to the object that got 409 Conflict by reading it again: each write it sent to the object after a 409 (an update, a patch or a delete, by the resourceVersion it carries), in a reconcile or not, carried a version ACTOR had been shown for that object (by an answer about it, a list item or a watch event of it), not the refused one, and none older than one it had seen, as recorded on the wire; with no 409, or neither a read nor a write after it, there is no retry to judge, and it fails",
		Run:     runRereads,
	})
	register(&Command{
		Name: "referee", Args: "ACTOR", Group: "assert", MinArgs: 1, MaxArgs: 1,
		Summary: "assert that ACTOR's calls broke none of the rules a failed reconcile names: in each of its reconciles (or, if it never reconciled, in all its calls), no stale object re-sent, no made-up or stale resourceVersion after a 409 (a version it was not shown for that object, or the refused one, or one older than it had seen; updates, patches and delete preconditions alike), no retry of a non-conflict, no update without a resourceVersion, no side effect called twice, no retry past its bound, as read on the wire; and, for its last reconcile, none of its controller's own rules about what the objects hold now (the reference controller's: a status that confirms a generation it did not act on, a write to a Deployment it does not control): the invariant an explore line most often needs",
		Run:     runReferee,
	})
	register(&Command{
		Name: "attempts", Args: "ACTOR VERB RESOURCE/NAME[/SUB] COUNT", Group: "assert", MinArgs: 4, MaxArgs: 4,
		Summary: "assert that ACTOR sent COUNT VERB calls on the object (or on the registry: create registrations/NAME), whatever the answers, as recorded on the wire; when the count is off, say which rule the extra calls broke",
		Run:     runAttempts,
	})
}

// The rules, by the short names failure messages end with.
const (
	ruleStaleObject = "stale object"
	ruleMadeUpRV    = "made-up resourceVersion"
	ruleStaleRV     = "stale resourceVersion"
	ruleNonConflict = "retry of a non-conflict"
	ruleBlindUpdate = "blind update"
	ruleUnbounded   = "unbounded retry"
	ruleSideEffect  = "side effect in retry"
)

// rereadRules are the rules the rereads assertion checks.
var rereadRules = map[string]bool{ruleStaleObject: true, ruleMadeUpRV: true, ruleStaleRV: true}

// Finding is one rule broken: where, which, and what a reader should know.
// A failed reconcile lists the findings of its span, each rule once per
// object; Controller.Check adds a controller's own.
type Finding struct {
	// Object is as the trace names it: deployments/web,
	// webapps/web/status.
	Object string
	// Rule is the rule's short name, such as "stale object".
	Rule string
	// Text says what happened, in the trace's symbols (rv3, #12).
	Text string
}

func (f Finding) String() string { return f.Text + " (" + f.Rule + ")" }

// writeVerbs are the verbs that change an object.
var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true}

// callVerbs are the verbs attempts counts.
var callVerbs = []string{"get", "create", "update", "patch", "delete"}

// wireFindings checks the calls actor made from seq from to seq to (0 for
// the end of the trace) by the wire rules (wireCheck.findings); with
// oneReconcile, which says the calls are one reconcile's, by those of a
// reconcile too.
func (sc *Scenario) wireFindings(actor string, from, to int, oneReconcile bool) []Finding {
	c := wireCheck{Actor: actor, From: from, To: to, OneReconcile: oneReconcile,
		Steps: ZeroDelayRetry().Steps, SideEffect: sc.sideEffect}
	return c.findings(sc.Trace().Rows())
}

// conflict reports whether r was refused with 409 Conflict: the object
// changed since it was read. (A 409 AlreadyExists is another matter, and
// so is a 409 whose Status names no reason, or whose reason is unknown.)
func conflict(r *Row) bool {
	return isConflict(r.Code, r.Reason) && !r.NoReason
}

// conflicted reports whether x was refused with 409 Conflict, its Status
// says so.
func (x *Exchange) conflicted() bool {
	return isConflict(x.Code, x.Reason) && !x.NoReason
}

// isConflict reports whether an answer with code and Status reason is a
// 409 Conflict.
func isConflict(code int, reason string) bool {
	return code == 409 && reason == "Conflict"
}

// refused reports whether the server refused the call. A GET's 404 is an
// answer: the object is not there.
func refused(r *Row) bool {
	return r.Code >= 400 && !(r.Verb == "get" && r.Code == 404)
}

// baseObject drops the subresource: a status write follows a GET of the
// object itself.
func baseObject(object string) string {
	parts := strings.SplitN(object, "/", 3)
	if len(parts) < 2 {
		return object
	}
	return parts[0] + "/" + parts[1]
}

func orNone(rv string) string {
	if rv == "" {
		return "no resourceVersion"
	}
	return rv
}

// brokenRules returns the rules span broke, on the wire and in what it
// left, each once per object: no rules when it broke none.
func (sc *Scenario) brokenRules(span Span) namedRules {
	fs := sc.wireFindings(span.Actor, span.From, span.To, true)
	if c := sc.controllers[span.Controller]; c != nil && c.Check != nil {
		fs = append(fs, c.Check(sc, span)...)
	}
	return nameRules(fs, "")
}

// spanFindings returns the wire findings of every reconcile actor ran, with
// the rules that hold within one reconcile, or of the whole trace when actor
// never reconciled. attempts explains a count with them.
func (sc *Scenario) spanFindings(actor string) []Finding {
	sc.mu.Lock()
	spans := append([]Span(nil), sc.reconciles...)
	sc.mu.Unlock()
	var out []Finding
	seen := false
	for _, s := range spans {
		if s.Actor == actor {
			seen = true
			out = append(out, sc.wireFindings(actor, s.From, s.To, true)...)
		}
	}
	if !seen {
		out = sc.wireFindings(actor, 0, 0, false)
	}
	return out
}

// wireObject resolves an object as the trace names it: an API object
// ("deployment/web" is deployments/web) or a call outside the API server
// (registrations/NAME, Controller.SideEffects).
func (sc *Scenario) wireObject(arg string) (string, error) {
	if res, name, ok := strings.Cut(arg, "/"); ok && sc.sideEffect(res) && name != "" && !strings.Contains(name, "/") {
		return arg, nil
	}
	r, err := sc.object(arg)
	if err != nil {
		return "", usageErr("%v", err)
	}
	return r.String(), nil
}

// runRereads judges what actor sent about the object after a 409 Conflict
// of its write, wherever it was sent: in a reconcile, in another, or by the
// script itself as that actor (a reconcile's span would miss the last).
// Something must follow the first 409, a read of the object or a write to
// it, or there is no retry to judge; a retry that reads the object and
// finds nothing left to write is judged by that read.
func runRereads(sc *Scenario, inv Invocation) error {
	actor := inv.Args[0]
	obj, err := sc.wireObject(inv.Args[1])
	if err != nil {
		return err
	}
	tr := sc.Trace()
	var conflicted *Exchange // the first write refused with 409 Conflict
	retried := false         // a read or a write followed it
	for _, x := range tr.Exchanges() {
		if x.Actor != actor {
			continue
		}
		write := x.Object() == obj && writeVerbs[x.Verb]
		read := x.Verb == "get" && (x.Object() == obj || x.Object() == baseObject(obj)) && (x.Code == 200 || x.Code == 404)
		if conflicted != nil && (write || read) {
			retried = true
		}
		if conflicted == nil && write && x.conflicted() {
			conflicted = x
		}
	}
	var rereads []Finding
	for _, f := range sc.wireFindings(actor, 0, 0, false) {
		if rereadRules[f.Rule] {
			rereads = append(rereads, f)
		}
	}
	broken := nameRules(rereads, obj)
	switch {
	case conflicted == nil:
		return fmt.Errorf("no write of %s to %s was refused with 409 Conflict, so there is no retry to check: the race did not happen\n%s", actor, obj, tr.Tail(20))
	case !retried:
		return fmt.Errorf("%s neither read nor wrote %s after #%d %s was refused with 409 Conflict, so there is no retry to judge: the write was given up, not retried\n%s",
			actor, obj, conflicted.Seq, conflicted.Verb, tr.Tail(20))
	case len(broken.findings) > 0:
		return broken.wrap(fmt.Errorf("%s did not read %s again before retrying it:%s\n%s", actor, obj, broken, tr.Tail(20)))
	}
	return nil
}

func runAttempts(sc *Scenario, inv Invocation) error {
	actor, verb := inv.Args[0], inv.Args[1]
	if !contains(callVerbs, verb) {
		return usageErr("unknown verb %q%s; attempts counts %s", verb, suggest(verb, callVerbs), strings.Join(callVerbs, ", "))
	}
	obj, err := sc.wireObject(inv.Args[2])
	if err != nil {
		return err
	}
	want, err := strconv.Atoi(inv.Args[3])
	if err != nil || want < 0 {
		return usageErr("bad count %q: want a whole number", inv.Args[3])
	}
	tr := sc.Trace()
	got := 0
	for _, x := range tr.Exchanges() {
		if x.Actor == actor && x.Verb == verb && x.Object() == obj {
			got++
		}
	}
	if got != want {
		why := nameRules(sc.spanFindings(actor), obj)
		return why.wrap(fmt.Errorf("%s sent %d %s %s, want %d%s\n%s", actor, got, verb, obj, want, why, tr.Tail(20)))
	}
	return nil
}

func runReferee(sc *Scenario, inv Invocation) error {
	actor := inv.Args[0]
	if !actorName.MatchString(actor) {
		return usageErr("bad actor name %q", actor)
	}
	tr := sc.Trace()
	calls := 0
	for _, x := range tr.Exchanges() {
		if x.Actor == actor {
			calls++
		}
	}
	if calls == 0 {
		return fmt.Errorf("%s made no call, so there is nothing to referee\n%s", actor, tr.Tail(20))
	}
	fs := sc.spanFindings(actor)
	// A controller's own rules judge what its objects hold now: once, for
	// its last reconcile.
	sc.mu.Lock()
	var last *Span
	for i := range sc.reconciles {
		if sc.reconciles[i].Actor == actor {
			last = &sc.reconciles[i]
		}
	}
	sc.mu.Unlock()
	if last != nil {
		if c := sc.controllers[last.Controller]; c != nil && c.Check != nil {
			fs = append(fs, c.Check(sc, *last)...)
		}
	}
	if broken := nameRules(fs, ""); len(broken.findings) > 0 {
		return broken.wrap(fmt.Errorf("%s broke the rules:%s\n%s", actor, broken, tr.Tail(20)))
	}
	return nil
}
