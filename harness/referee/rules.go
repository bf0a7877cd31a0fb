package referee

import (
	"strings"

	"github.com/racekit/racekit/harness/record"
)

// The rules, by the short names failure messages end with.
const (
	RuleStaleObject = "stale object"
	RuleMadeUpRV    = "made-up resourceVersion"
	RuleStaleRV     = "stale resourceVersion"
	RuleNonConflict = "retry of a non-conflict"
	RuleBlindUpdate = "blind update"
	RuleUnbounded   = "unbounded retry"
	RuleSideEffect  = "side effect in retry"
)

// RereadRules are the rules the rereads assertion checks.
var RereadRules = map[string]bool{RuleStaleObject: true, RuleMadeUpRV: true, RuleStaleRV: true}

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

// CallVerbs are the verbs attempts counts.
var CallVerbs = []string{"get", "create", "update", "patch", "delete"}

// conflict reports whether r was refused with 409 Conflict: the object
// changed since it was read. (A 409 AlreadyExists is another matter, and
// so is a 409 whose Status names no reason, or whose reason is unknown.)
func conflict(r *record.Row) bool {
	return record.IsConflict(r.Code, r.Reason) && !r.NoReason
}

// refused reports whether the server refused the call. A GET's 404 is an
// answer: the object is not there.
func refused(r *record.Row) bool {
	return r.Code >= 400 && !(r.Verb == "get" && r.Code == 404)
}

// BaseObject drops the subresource: a status write follows a GET of the
// object itself.
func BaseObject(object string) string {
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
