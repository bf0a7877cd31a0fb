package referee

import (
	"fmt"
	"strings"

	"github.com/racekit/racekit/harness/record"
)

// Check is what the wire rules need besides the trace's rows: whose
// calls they judge, where, and what a reconcile may do. Its findings are a
// function of the rows alone, so that the rules can be tested on rows
// written by hand.
type Check struct {
	// Actor is whose calls are judged.
	Actor string
	// From and To bound the judged calls by Seq; To 0 is the trace's end.
	From, To int
	// OneReconcile says that the calls are one reconcile's: no write is
	// sent more often than a retry allows (Steps attempts), and no side
	// effect (SideEffect of its resource) more than once.
	OneReconcile bool
	Steps        int
	SideEffect   func(resource string) bool
}

// Findings checks the calls c.Actor made from seq c.From to c.To in the
// scenario's namespace (a row with an OtherNamespace is another
// scenario's), object by object and in order:
//
//   - after a 409 Conflict, the next write to the object (an update, a
//     patch, a delete, each with the resourceVersion it carries) sends a
//     version the actor was shown for that object before it (by an answer
//     about the object, an item of a list, or an event of a watch of its
//     resource), not the refused one again, and none older than one it
//     has already seen for it (by its own reads, or by a watch event that
//     came before its last read of the version it sent);
//   - after a call refused for any other reason, no write to the object and
//     no second such call follow (a GET's 404 is an answer, not a refusal);
//   - an update carries a resourceVersion;
//   - with OneReconcile: no write is sent more often than a retry allows,
//     and no side effect more than once.
//
// It quotes the trace's symbols (rv3), so that a message reads the same on
// every run.
func (c Check) Findings(rows []record.Row) []Finding {
	var out []Finding
	add := func(object, rule, format string, args ...any) {
		out = append(out, Finding{Object: object, Rule: rule, Text: fmt.Sprintf(format, args...)})
	}
	seen := showings(rows)
	refusals := map[string]*record.Row{}  // the last call refused for another reason than a conflict
	lastWrite := map[string]*record.Row{} // by object
	writes := map[string]map[string]int{}
	var order []string
	for _, row := range rows {
		// A call in another scenario's namespace is that scenario's to
		// judge: an object of the same name there is another object.
		if !row.IsCall() || row.Actor != c.Actor || row.Seq < c.From || (c.To > 0 && row.Seq > c.To) || row.OtherNamespace != "" {
			continue
		}
		r := row
		if writes[r.Object] == nil {
			writes[r.Object] = map[string]int{}
			order = append(order, r.Object)
		}
		if prev := refusals[r.Object]; prev != nil && (prev.Verb == r.Verb || record.WriteVerbs[r.Verb]) {
			add(r.Object, RuleNonConflict, "#%d %s %s came after #%d %s was refused with %s: only a 409 Conflict is retried; any other error goes back to the caller at once",
				r.Seq, r.Verb, r.Object, prev.Seq, prev.Verb, prev.Status())
			delete(refusals, r.Object)
		}
		if refused(&r) && !conflict(&r) {
			refusals[r.Object] = &r
		}
		if !record.WriteVerbs[r.Verb] {
			continue
		}
		if w := lastWrite[r.Object]; w != nil && conflict(w) {
			if f, ok := seen.judgeRetry(&r, w); ok {
				out = append(out, f)
			}
		}
		if r.Verb == "update" && r.SentRV == "" {
			add(r.Object, RuleBlindUpdate, "#%d update %s sent no resourceVersion: an unconditional write overwrites whatever others changed since the read, and no 409 can warn",
				r.Seq, r.Object)
		}
		writes[r.Object][r.Verb]++
		lastWrite[r.Object] = &r
	}
	if !c.OneReconcile {
		return out
	}
	for _, obj := range order {
		for _, verb := range CallVerbs {
			switch n := writes[obj][verb]; {
			case c.SideEffect != nil && c.SideEffect(strings.SplitN(obj, "/", 2)[0]) && n > 1:
				add(obj, RuleSideEffect, "one reconcile sent %d %s %s: the side effect ran inside a retry, once per attempt; it belongs outside any retry, once per reconcile",
					n, verb, obj)
			case n > c.Steps:
				add(obj, RuleUnbounded, "one reconcile sent %d %s %s, more than the %d attempts a retry makes: when the retries run out, the Conflict goes back to the caller",
					n, verb, obj, c.Steps)
			}
		}
	}
	return out
}

// judgeRetry judges r, a write to the object whose last write w was refused
// with 409 Conflict, by the resourceVersion it sent; ok is false when r
// breaks no rule.
func (s showing) judgeRetry(r, w *record.Row) (f Finding, ok bool) {
	key := objectOf(r.Namespace, BaseObject(r.Object))
	before := s.before(r.Actor, key, r.Seq)
	var fresh *shownVersion // the first version shown since w
	last := -1              // where r.SentRV was last shown
	for i, v := range before {
		if fresh == nil && v.pos > 2*w.Seq {
			fresh = &before[i]
		}
		if v.rv == r.SentRV {
			last = v.pos
		}
	}
	has := last >= 0
	// The newest version seen: by the actor's own reads, or by a watch
	// event that came before its last read of what it sent. An event that
	// came after that read is news the write could not have acted on yet,
	// whose timing no hook decides.
	var newest *shownVersion
	for i, v := range before {
		if (!v.event || v.pos < last) && (newest == nil || v.rev > newest.rev) {
			newest = &before[i]
		}
	}
	finding := func(rule, format string, args ...any) (Finding, bool) {
		return Finding{Object: r.Object, Rule: rule, Text: fmt.Sprintf(format, args...)}, true
	}
	switch {
	case r.SentRV == "" && w.SentRV == "" && fresh == nil:
		return finding(RuleStaleObject, "#%d %s %s re-sent no resourceVersion, as #%d that was refused, without reading the object again: a retry starts from a fresh GET, or it sends the same stale object again",
			r.Seq, r.Verb, r.Object, w.Seq)
	case r.SentRV == "" && fresh == nil:
		return finding(RuleStaleObject, "#%d %s %s dropped %s, which #%d was refused for, and sent no resourceVersion, without reading the object again: a retry starts from a fresh GET, or it overwrites what it never read",
			r.Seq, r.Verb, r.Object, w.SentRV, w.Seq)
	case r.SentRV == "":
		return f, false // unconditional, after a read: an update is a blind update
	case r.SentRV == w.SentRV && fresh == nil:
		return finding(RuleStaleObject, "#%d %s %s re-sent %s, which #%d was refused for, without reading the object again: a retry starts from a fresh GET, or it sends the same stale object again",
			r.Seq, r.Verb, r.Object, r.SentRV, w.Seq)
	case r.SentRV == w.SentRV:
		return finding(RuleStaleRV, "#%d %s %s sent %s again, which #%d was refused for, though %s showed %s %s since: a retry writes what it has just read",
			r.Seq, r.Verb, r.Object, r.SentRV, w.Seq, fresh.via, r.Actor, fresh.rv)
	case !has:
		return finding(RuleMadeUpRV, "#%d %s %s sent %s, which no read showed %s for %s before it (no answer about it, list item or watch event)%s: a resourceVersion is opaque, so a retry reads the object again instead of making one up",
			r.Seq, r.Verb, r.Object, r.SentRV, r.Actor, BaseObject(r.Object), s.elsewhere(r.SentRV, r.Actor, key))
	case r.SentRev != 0 && newest != nil && newest.rev > r.SentRev:
		return finding(RuleStaleRV, "#%d %s %s sent %s, older than %s, which %s showed %s before it: a retry writes the newest version it has read, or it undoes what it has seen others write",
			r.Seq, r.Verb, r.Object, r.SentRV, newest.rv, newest.via, r.Actor)
	}
	return f, false
}

// shownVersion is one version of an object shown to an actor.
type shownVersion struct {
	rv  string
	rev uint64
	// pos is where the actor was shown it: 2×Seq for an answer, and
	// 2×After+1 for a watch event, which came after exchange After was
	// sent and before the next: shown before exchange n when pos < 2n.
	pos int
	// via says how, for messages: "#12 get", "the list #7", "a MODIFIED
	// event of watch #5".
	via string
	// event is set for a watch event.
	event bool
}

// showing holds, by actor and object, the versions each actor was shown
// of each object, in the order of the trace.
type showing map[string]map[string][]shownVersion

// objectOf keys an object by its namespace and resource/name.
func objectOf(namespace, object string) string { return namespace + " " + object }

// showings reads from rows what each actor was shown of each object: the
// object of each successful answer about it, the items of each list, the
// objects of each watch event.
func showings(rows []record.Row) showing {
	s := showing{}
	add := func(actor, key string, v shownVersion) {
		if v.rv == "" {
			return
		}
		if s[actor] == nil {
			s[actor] = map[string][]shownVersion{}
		}
		s[actor][key] = append(s[actor][key], v)
	}
	for _, r := range rows {
		if !r.IsCall() || r.Code < 200 || r.Code > 299 {
			continue
		}
		switch r.Verb {
		case "get", "create", "update", "patch", "delete":
			add(r.Actor, objectOf(r.Namespace, BaseObject(r.Object)), shownVersion{rv: r.GotRV, rev: r.GotRev, pos: 2 * r.Seq, via: fmt.Sprintf("#%d %s", r.Seq, r.Verb)})
		case "list", "watch":
			resource, _, _ := strings.Cut(r.Object, "/")
			for _, it := range r.Shown {
				if it.Name == "" {
					continue // a bookmark
				}
				v := shownVersion{rv: it.RV, rev: it.Rev, pos: 2 * r.Seq, via: fmt.Sprintf("the list #%d", r.Seq)}
				if r.Verb == "watch" {
					v.pos, v.via, v.event = 2*it.After+1, fmt.Sprintf("a %s event of watch #%d", it.Event, r.Seq), true
				}
				add(r.Actor, objectOf(it.Namespace, resource+"/"+it.Name), v)
			}
		}
	}
	return s
}

// before returns the versions of the object key shown to actor before it
// sent exchange seq, in the order it was shown them.
func (s showing) before(actor, key string, seq int) []shownVersion {
	var out []shownVersion
	for _, v := range s[actor][key] {
		if v.pos < 2*seq {
			out = append(out, v)
		}
	}
	return out
}

// elsewhere says where rv was first shown, if not to actor for the object
// key: to another actor, or to actor for another object; "" when nowhere.
func (s showing) elsewhere(rv, actor, key string) string {
	var first *shownVersion
	var firstActor, firstKey string
	for a, objects := range s {
		for k, vs := range objects {
			for i, v := range vs {
				if v.rv != rv || (a == actor && k == key) {
					continue
				}
				if first == nil || v.pos < first.pos || (v.pos == first.pos && a+k < firstActor+firstKey) {
					first, firstActor, firstKey = &vs[i], a, k
				}
			}
		}
	}
	switch {
	case first == nil:
		return ""
	case firstActor == actor:
		_, obj, _ := strings.Cut(firstKey, " ")
		return fmt.Sprintf("; %s showed %s %s as a version of %s", first.via, actor, rv, obj)
	}
	return fmt.Sprintf("; %s showed it to %s, not to %s", first.via, firstActor, actor)
}
