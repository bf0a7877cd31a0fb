package language

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/racekit/racekit/harness/record"
)

// readsState says, in the summary of each assertion on an object's state,
// where the state comes from: Scenario.read.
const readsState = "read as the API server holds it: its last answer about the object, from the trace, or a GET when that answer may be stale"

var assertCommands = []*Command{
	{
		Name: "conflicts", Args: "ACTOR VERB RESOURCE/NAME[/SUB] COUNT", Group: "assert", MinArgs: 4, MaxArgs: 4,
		Summary: "assert that the API server answered COUNT of ACTOR's VERB calls on the object with 409 Conflict, as recorded on the wire",
		Detail:  "assert that the API server answered COUNT of ACTOR's VERB calls on the object with 409 Conflict (the Status reason Conflict: a 409 AlreadyExists is no conflict), as recorded on the wire, whatever the media type (JSON, YAML, protobuf, CBOR); it fails when a 409's reason is unknown (a body the recorder could not read), rather than guess",
		Run:     runConflicts,
	},
	{
		Name: "wire", Args: "ACTOR VERB RESOURCE/NAME[/SUB] CODE COUNT [since=MARK]", Group: "assert", MinArgs: 5, MaxArgs: 6,
		Summary: "assert that the API server answered COUNT of ACTOR's VERB calls on the object with HTTP status CODE, whatever the reason, as recorded on the wire",
		Detail:  "assert that the API server answered COUNT of ACTOR's VERB calls on the object with HTTP status CODE, whatever the reason, as recorded on the wire; since=MARK counts only the calls sent after mark MARK was taken (a restarted name's new life: wire controller delete configmaps/src 200 0 since=restarted says it deleted nothing). The object may be a side-effect service's, answered by that service (wire controller delete registrations/web 204 1: the reference controller's registry)",
		Run:     runWire,
	},
	{
		Name: "field", Args: "RESOURCE/NAME PATH VALUE", Group: "assert", MinArgs: 3, MaxArgs: 3,
		Summary: "assert that the object's field at the dotted PATH (spec.replicas) has VALUE, read as the API server holds it",
		Detail: "assert that the object's field at the dotted PATH (spec.replicas) has VALUE (<absent>: it has none), " + readsState + "; a subresource (deployments/web/scale) is always read with a GET of its own; " +
			"\"!\" asserts that the object is there and its field does not have VALUE: a field that is absent has no VALUE, so it holds (unless VALUE is <absent>), and an object that is not there fails it: a deleted object is no object whose field differs (! field statefulsets/web spec.replicas 0: it was neither scaled to nothing nor deleted)",
		Negation: NegSelf, Run: runField,
	},
	{
		Name: "annotation", Args: "RESOURCE/NAME KEY[=VALUE]", Group: "assert", MinArgs: 2, MaxArgs: 2,
		Summary:  "assert that the object carries the annotation (with VALUE, if given), read as the API server holds it",
		Detail:   "assert that the object carries the annotation (with VALUE, if given), " + readsState + "; a subresource is always read with a GET of its own; \"!\" asserts that it does not",
		Negation: NegSelf, Run: runAnnotation,
	},
	{
		Name: "condition", Args: "RESOURCE/NAME TYPE STATUS [REASON]", Group: "assert", MinArgs: 3, MaxArgs: 4,
		Summary: "assert that the object's status.conditions has condition TYPE with STATUS (and REASON), read as the API server holds it",
		Detail:  "assert that the object's status.conditions (metav1.Condition, as most controllers write them) has condition TYPE with STATUS (True, False, Unknown) and, if given, REASON, " + readsState,
		Run:     runCondition,
	},
	{
		Name: "owned-by", Args: "RESOURCE/NAME RESOURCE/NAME", Group: "assert", MinArgs: 2, MaxArgs: 2,
		Summary: "assert that the first object's controlling ownerReference names the second object, uid and all",
		Detail:  "assert that the first object's controlling ownerReference names the second object, uid and all, each " + readsState,
		Run:     runOwnedBy,
	},
	{
		Name: "fired", Args: "HOOK COUNT", Group: "assert", MinArgs: 2, MaxArgs: 2,
		Summary: "assert that the HOOKth armed hook has fired COUNT times (a hook that never fires fails the scenario anyway)",
		Run:     runFired,
	},
	{
		Name: "trace", Args: "", Group: "assert", MinArgs: 0, MaxArgs: 0,
		Summary: "print the normalized trace to stdout; compare it with cmp stdout trace.golden (go test -update rewrites it)",
		Run:     runTrace,
	},
}

// wireCalls reads the ACTOR VERB RESOURCE/NAME[/SUB] and COUNT arguments
// that conflicts and wire share, and returns the object, the count wanted,
// the trace and ACTOR's VERB calls on the object in it.
func (sc *Scenario) wireCalls(actor, verb, object, count string) (string, int, record.Trace, []*record.Exchange, error) {
	want, err := parseCount(count)
	if err != nil {
		return "", 0, nil, nil, err
	}
	obj, err := sc.WireObject(object)
	if err != nil {
		return "", 0, nil, nil, err
	}
	tr := sc.Trace()
	return obj, want, tr, tr.Calls(actor, verb, obj), nil
}

// runConflicts counts the answers whose Status reason is Conflict: a 409
// says only that the request clashed with the object's state, and a 409
// AlreadyExists (a create of a name that is taken) is no race at all.
func runConflicts(sc *Scenario, inv Invocation) error {
	actor, verb := inv.Args[0], inv.Args[1]
	r, want, tr, calls, err := sc.wireCalls(actor, verb, inv.Args[2], inv.Args[3])
	if err != nil {
		return err
	}
	n := countConflicts(calls)
	if len(n.unknown) > 0 {
		return fmt.Errorf("cannot count the 409 Conflict responses to %s %s %s: the reason of %s is unknown, and only the reason Conflict says the object changed since it was read (a 409 may be AlreadyExists too)\n%s",
			actor, verb, r, strings.Join(n.unknown, ", "), tr.Tail(20))
	}
	if n.conflicts == want {
		return nil
	}
	also := ""
	if len(n.others) > 0 {
		also = fmt.Sprintf(" (and %s, which is no conflict: only the reason Conflict says the object changed since it was read)", strings.Join(n.others, ", "))
	}
	return Mismatched(countClaim(actor, verb, r, "409 Conflicts"), strconv.Itoa(want), strconv.Itoa(n.conflicts),
		fmt.Errorf("want %d 409 Conflict responses to %s %s %s on the wire, saw %d%s\n%s",
			want, actor, verb, r, n.conflicts, also, tr.Tail(20)))
}

// conflictCount is what countConflicts found.
type conflictCount struct {
	conflicts int
	// others are the 409s with another reason, and unknown those whose
	// reason is unknown, as "#7 409 AlreadyExists".
	others, unknown []string
}

// countConflicts counts the calls answered 409 Conflict, by the reason
// their Status gave.
func countConflicts(calls []*record.Exchange) conflictCount {
	var n conflictCount
	for _, x := range calls {
		switch {
		case x.Code != 409:
		case x.Conflicted():
			n.conflicts++
		case x.Reason == "":
			n.unknown = append(n.unknown, fmt.Sprintf("#%d 409 (%s)", x.Seq, x.ReasonUnknown))
		case x.NoReason:
			n.unknown = append(n.unknown, fmt.Sprintf("#%d 409 (its Status names no reason)", x.Seq))
		default:
			n.others = append(n.others, fmt.Sprintf("#%d %d %s", x.Seq, x.Code, x.Reason))
		}
	}
	return n
}

// runWire counts the answers with the status code, whatever their reason,
// to the calls sent since the mark since= names (every call without it).
func runWire(sc *Scenario, inv Invocation) error {
	args, opts, err := SplitOptions(inv.Args, []string{SinceOption})
	if err != nil {
		return err
	}
	if len(args) != 5 {
		return UsageError("want ACTOR VERB RESOURCE/NAME[/SUB] CODE COUNT [since=MARK], got %q", strings.Join(inv.Args, " "))
	}
	after, err := sc.Since(opts)
	if err != nil {
		return err
	}
	actor, verb := args[0], args[1]
	code, err := strconv.Atoi(args[3])
	if err != nil || code < 100 || code > 599 {
		return UsageError("bad status code %q", args[3])
	}
	r, want, tr, calls, err := sc.wireCalls(actor, verb, args[2], args[4])
	if err != nil {
		return err
	}
	got := 0
	for _, x := range calls {
		if x.Seq > after && x.Code == code {
			got++
		}
	}
	if got != want {
		since := SinceText(opts)
		return Mismatched(countClaim(actor, verb, r, strconv.Itoa(code)+"s"+since), strconv.Itoa(want), strconv.Itoa(got),
			fmt.Errorf("want %d %d responses to %s %s %s on the wire%s, saw %d\n%s",
				want, code, actor, verb, r, since, got, tr.Tail(20)))
	}
	return nil
}

// parseCount reads a COUNT argument.
func parseCount(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, UsageError("bad count %q: want a whole number", s)
	}
	return n, nil
}

func runField(sc *Scenario, inv Invocation) error {
	r, err := sc.Object(inv.Args[0])
	if err != nil {
		return UsageError("%v", err)
	}
	claim, want := r.String()+" "+inv.Args[1], inv.Args[2]
	if inv.Neg {
		want = "not " + want
	}
	obj, err := sc.ReadRef(r)
	if apierrors.IsNotFound(err) {
		// A deleted object holds no field, but "! field" says the object
		// is there with another value: the object that is gone fails it.
		return Mismatched(claim, want, NotFound, fmt.Errorf("read %s: %w", r, err))
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", r, err)
	}
	path := strings.Split(strings.TrimPrefix(inv.Args[1], "."), ".")
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if err != nil {
		return fmt.Errorf("%s %s: %w", r, inv.Args[1], err)
	}
	got := absent
	if found {
		got = Render(v)
	}
	switch {
	case inv.Neg && got == inv.Args[2]:
		return Mismatched(claim, want, got,
			fmt.Errorf("%s %s: want any value but %s, and it is %s\n%s", r, inv.Args[1], inv.Args[2], got, sc.Trace().Tail(20)))
	case !inv.Neg && got != want:
		return Mismatched(claim, want, got,
			fmt.Errorf("%s %s: (-want +got)\n%s\n%s", r, inv.Args[1], cmp.Diff(want, got), sc.Trace().Tail(20)))
	}
	return nil
}

// absent is what field shows of a field the object does not have, and
// the VALUE that asserts it has none.
const absent = "<absent>"

// Render prints a field value the way scenarios write it: scalars bare,
// anything else as JSON.
func Render(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64, float64, bool:
		return fmt.Sprint(v)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func runAnnotation(sc *Scenario, inv Invocation) error {
	r, err := sc.Object(inv.Args[0])
	if err != nil {
		return UsageError("%v", err)
	}
	key, want, withValue := strings.Cut(inv.Args[1], "=")
	claim := r.String() + " annotation " + key
	obj, err := sc.ReadRef(r)
	if apierrors.IsNotFound(err) && !inv.Neg {
		return Mismatched(claim, inv.Args[1], NotFound, fmt.Errorf("read %s: %w", r, err))
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", r, err)
	}
	got, present := obj.GetAnnotations()[key]
	holds := present && (!withValue || got == want)
	shown := absent
	if present {
		shown = key + "=" + got
	}
	switch {
	case inv.Neg && holds:
		return Mismatched(claim, absent, shown, fmt.Errorf("%s: want no annotation %s, but it is there: %q\n%s", r, inv.Args[1], got, sc.Trace().Tail(20)))
	case !inv.Neg && !present && r.Subresource != "":
		return Mismatched(claim, inv.Args[1], shown, fmt.Errorf("%s: annotation %s is missing: a subresource such as scale is an object of its own, whose metadata need not carry the object's annotations\n%s", r, key, sc.Trace().Tail(20)))
	case !inv.Neg && !present:
		return Mismatched(claim, inv.Args[1], shown, fmt.Errorf("%s: annotation %s is missing: the other writer's change was lost\n%s", r, key, sc.Trace().Tail(20)))
	case !inv.Neg && !holds:
		return Mismatched(claim, inv.Args[1], shown, fmt.Errorf("%s: annotation %s (-want +got)\n%s", r, key, cmp.Diff(want, got)))
	}
	return nil
}

func runFired(sc *Scenario, inv Invocation) error {
	id, err := strconv.Atoi(inv.Args[0])
	if err != nil {
		return UsageError("bad hook number %q: hooks are numbered 1, 2, ... in the order they were armed", inv.Args[0])
	}
	want, err := strconv.Atoi(inv.Args[1])
	if err != nil || want < 0 {
		return UsageError("bad count %q", inv.Args[1])
	}
	h, ok := sc.HookByID(id)
	if !ok {
		return UsageError("no hook %d has been armed", id)
	}
	if got := sc.hooks.set.Fired(h.Armed); got != want {
		return Mismatched(fmt.Sprintf("hook %d fired", id), strconv.Itoa(want), strconv.Itoa(got), fmt.Errorf("hook %d (%s, armed at %s) fired %d times, want %d\n%s", id, h.Hook.String(), h.Pos, got, want, sc.Trace().Tail(20)))
	}
	return nil
}

// runTrace prints the trace, as the extensions show it
// (Extension.ShowTrace): in a run that added calls of its own, without
// them, which a golden trace of the scenario must not see.
func runTrace(sc *Scenario, inv Invocation) error {
	tr := sc.Trace()
	for _, e := range sc.run.opts.Extensions {
		if e.ShowTrace != nil {
			tr = e.ShowTrace(tr)
		}
	}
	_, err := fmt.Fprint(inv.Stdout, tr.Normalize())
	return err
}

// conditionStatuses are the values a condition's status may take.
var conditionStatuses = []string{"True", "False", "Unknown"}

// runCondition reads the object's status.conditions as metav1.Condition
// lays them out (type, status, reason), whatever the object's kind.
func runCondition(sc *Scenario, inv Invocation) error {
	r, err := sc.Object(inv.Args[0])
	if err != nil {
		return UsageError("%v", err)
	}
	typ, status := inv.Args[1], inv.Args[2]
	if !contains(conditionStatuses, status) {
		return UsageError("bad status %q%s: a condition's status is True, False or Unknown", status, suggest(status, conditionStatuses))
	}
	obj, err := sc.ReadRef(r)
	if err != nil {
		return fmt.Errorf("read %s: %w", r, err)
	}
	conds, _, err := unstructured.NestedSlice(obj.Object, "status", "conditions")
	if err != nil {
		return fmt.Errorf("%s status.conditions is not a list of conditions: %w", r, err)
	}
	want := []string{typ, status}
	got := []string{typ, absent}
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != typ {
			continue
		}
		got = []string{typ, fmt.Sprint(m["status"])}
		if len(inv.Args) == 4 {
			reason, _ := m["reason"].(string)
			got = append(got, reason)
		}
	}
	if len(inv.Args) == 4 {
		want = append(want, inv.Args[3])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		return Mismatched(r.String()+" condition "+typ, strings.Join(want, " "), strings.Join(got, " "),
			fmt.Errorf("%s condition (-want +got)\n%s\n%s", r, diff, sc.Trace().Tail(20)))
	}
	return nil
}

func runOwnedBy(sc *Scenario, inv Invocation) error {
	r, err := sc.Object(inv.Args[0])
	if err != nil {
		return UsageError("%v", err)
	}
	o, err := sc.Object(inv.Args[1])
	if err != nil {
		return UsageError("%v", err)
	}
	obj, err := sc.ReadRef(r)
	if err != nil {
		return fmt.Errorf("read %s: %w", r, err)
	}
	owner, err := sc.ReadRef(o)
	if err != nil {
		return fmt.Errorf("read the owner %s: %w", o, err)
	}
	want := owner.GetKind() + " " + owner.GetName()
	got := "no controlling owner"
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref != nil {
		got = ref.Kind + " " + ref.Name
		if ref.UID != owner.GetUID() && got == want {
			got += " of another uid (an earlier object of that name?)"
		}
	}
	if got != want {
		return Mismatched(r.String()+" controlling owner", want, got,
			fmt.Errorf("%s controlling owner (-want +got)\n%s\n%s", r, cmp.Diff(want, got), sc.Trace().Tail(20)))
	}
	return nil
}
