package semantics

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/hooks"
)

// The commands of the API-semantics scenarios: edit a snapshot before it is
// sent, update a status, apply, delete with preconditions, and the assertion
// on the code and reason each call got. Lists are in list.go, watches in
// watch.go, etcd compaction in compact.go.
var snapshotCommands = []*language.Command{
	{
		Name: "set", Args: "SNAPSHOT PATH JSON", Group: "write", MinArgs: 3, MaxArgs: 3,
		Summary:  "set the field at the dotted PATH of SNAPSHOT to the JSON value (a string is quoted: \"$RV\"), before update sends it",
		Hookable: true, Run: runSet,
	},
	{
		Name: "unset", Args: "SNAPSHOT PATH", Group: "write", MinArgs: 2, MaxArgs: 2,
		Summary:  "remove the field at the dotted PATH of SNAPSHOT, such as metadata.resourceVersion",
		Hookable: true, Run: runUnset,
	},
	{
		Name: "let", Args: "VAR SNAPSHOT PATH [+N|-N]", Group: "write", MinArgs: 3, MaxArgs: 4,
		Summary: "set $VAR to the field at the dotted PATH of SNAPSHOT, plus N if given (which treats a resourceVersion as a number, on purpose)",
		Run:     runLet,
	},
	{
		Name: "update-status", Args: "ACTOR SNAPSHOT", Group: "write", MinArgs: 2, MaxArgs: 2,
		Summary:  "PUT SNAPSHOT to the status subresource as ACTOR, with the resourceVersion it carries",
		Negation: language.NegAPIError, Hookable: true, Run: runUpdateStatus,
	},
	{
		Name: "apply", Args: "ACTOR FILE [force]", Group: "write", MinArgs: 2, MaxArgs: 3,
		Summary:  "server-side apply the objects in the archive FILE as field manager ACTOR, taking contested fields from other managers with force",
		Negation: language.NegAPIError, Hookable: true, Run: runApply,
	},
	{
		Name: "delete", Args: "ACTOR RESOURCE/NAME [resourceVersion=RV] [uid=UID] [propagation=Background|Orphan|Foreground]", Group: "write", MinArgs: 2, MaxArgs: 5,
		Summary:  "DELETE the object as ACTOR, with resourceVersion and uid preconditions and a propagationPolicy if given",
		Detail:   "DELETE the object as ACTOR, with preconditions on its resourceVersion and uid if given, and the propagationPolicy given (what a garbage collector, controller-manager's, does with the objects it owns; without one, the API server's default for the kind)",
		Negation: language.NegAPIError, Hookable: true, Run: runDelete,
	},
	{
		Name: "answered", Args: "ACTOR VERB RESOURCE[/NAME[/SUB]] CODE REASON [MESSAGE]", Group: "assert", MinArgs: 5, MaxArgs: 6,
		Summary: "assert that the API server answered ACTOR's last VERB call on the object or collection with CODE and REASON",
		Detail:  "assert that the API server answered ACTOR's last VERB call on the object or collection with HTTP status CODE and REASON (Conflict; OK for a success), and a Status message matching the regular expression MESSAGE, as recorded on the wire",
		Run:     runAnswered,
	},
}

// fieldPath splits a dotted path such as metadata.resourceVersion.
func fieldPath(s string) ([]string, error) {
	path := strings.Split(strings.TrimPrefix(s, "."), ".")
	if slices.Contains(path, "") {
		return nil, language.UsageError("bad path %q: want dotted field names, such as metadata.resourceVersion", s)
	}
	return path, nil
}

func runSet(sc *language.Scenario, inv language.Invocation) error {
	snap, err := sc.Snapshot(inv.Args[0])
	if err != nil {
		return err
	}
	path, err := fieldPath(inv.Args[1])
	if err != nil {
		return err
	}
	value, err := jsonValue(inv.Args[2])
	if err != nil {
		return language.UsageError("value %s is not JSON (quote a string: '\"abc\"' or \"$RV\"): %v", inv.Args[2], err)
	}
	edited := snap.DeepCopy()
	if err := unstructured.SetNestedField(edited.Object, value, path...); err != nil {
		return fmt.Errorf("set %s: %w", inv.Args[1], err)
	}
	sc.KeepSnapshot(inv.Args[0], edited)
	return nil
}

// jsonValue decodes s, with whole numbers as int64, as unstructured objects
// keep them.
func jsonValue(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one value")
	}
	return numbers(v), nil
}

func numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n
		}
		f, _ := v.Float64()
		return f
	case map[string]any:
		for k, x := range v {
			v[k] = numbers(x)
		}
	case []any:
		for i, x := range v {
			v[i] = numbers(x)
		}
	}
	return v
}

func runUnset(sc *language.Scenario, inv language.Invocation) error {
	snap, err := sc.Snapshot(inv.Args[0])
	if err != nil {
		return err
	}
	path, err := fieldPath(inv.Args[1])
	if err != nil {
		return err
	}
	edited := snap.DeepCopy()
	unstructured.RemoveNestedField(edited.Object, path...)
	sc.KeepSnapshot(inv.Args[0], edited)
	return nil
}

var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func runLet(sc *language.Scenario, inv language.Invocation) error {
	name := inv.Args[0]
	if !varName.MatchString(name) {
		return language.UsageError("bad variable name %q: want letters, digits and _, such as OLD_RV", name)
	}
	snap, err := sc.Snapshot(inv.Args[1])
	if err != nil {
		return err
	}
	path, err := fieldPath(inv.Args[2])
	if err != nil {
		return err
	}
	v, found, err := unstructured.NestedFieldNoCopy(snap.Object, path...)
	if err != nil || !found {
		return fmt.Errorf("snapshot %s has no %s", inv.Args[1], inv.Args[2])
	}
	value := language.Render(v)
	if len(inv.Args) == 4 {
		delta, err := strconv.ParseInt(inv.Args[3], 10, 64)
		if err != nil || !strings.ContainsAny(inv.Args[3][:1], "+-") {
			return language.UsageError("bad offset %q: want +N or -N", inv.Args[3])
		}
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return fmt.Errorf("%s %s is %q, not a number to add %s to", inv.Args[1], inv.Args[2], value, inv.Args[3])
		}
		value = strconv.FormatInt(n+delta, 10)
	}
	if inv.Setenv == nil {
		return fmt.Errorf("cannot set a variable in a hook action")
	}
	if path[len(path)-1] == "resourceVersion" {
		// The scenario will send this version later: keep etcd from
		// compacting it away meanwhile.
		if err := holdHistory(sc, inv); err != nil {
			return err
		}
	}
	inv.Setenv(name, value)
	return nil
}

func runUpdateStatus(sc *language.Scenario, inv language.Invocation) error {
	a, err := sc.Actor(inv.Args[0])
	if err != nil {
		return language.UsageError("%v", err)
	}
	snap, err := sc.Snapshot(inv.Args[1])
	if err != nil {
		return err
	}
	r, err := sc.ObjectRef(snap, "status")
	if err != nil {
		return err
	}
	_, err = sc.ResourceClient(a, r).UpdateStatus(sc.Context(), snap.DeepCopy(), metav1.UpdateOptions{})
	return err
}

func runApply(sc *language.Scenario, inv language.Invocation) error {
	a, err := sc.Actor(inv.Args[0])
	if err != nil {
		return language.UsageError("%v", err)
	}
	force := false
	if len(inv.Args) == 3 {
		if inv.Args[2] != "force" {
			return language.UsageError("unknown flag %q%s: the only one is force", inv.Args[2], language.Suggest(inv.Args[2], []string{"force"}))
		}
		force = true
	}
	objs, err := sc.DecodeFile(inv.Args[1])
	if err != nil {
		return err
	}
	for _, obj := range objs {
		r, err := sc.ObjectRef(obj, "")
		if err != nil {
			return fmt.Errorf("%s: %w", inv.Args[1], err)
		}
		if r.Namespaced {
			obj.SetNamespace(sc.Namespace)
		}
		opts := metav1.ApplyOptions{FieldManager: a.Name, Force: force}
		if _, err := sc.ResourceClient(a, r).Apply(sc.Context(), r.Name, obj, opts); err != nil {
			return err
		}
	}
	return nil
}

var deleteOptions = []string{"resourceVersion", "uid", "propagation"}

// propagations are the propagation policies delete takes.
var propagations = []metav1.DeletionPropagation{metav1.DeletePropagationBackground, metav1.DeletePropagationOrphan, metav1.DeletePropagationForeground}

func runDelete(sc *language.Scenario, inv language.Invocation) error {
	a, r, err := sc.ActorAndObject(inv.Args[0], inv.Args[1])
	if err != nil {
		return err
	}
	opts, err := language.ParseOptions(inv.Args[2:], deleteOptions)
	if err != nil {
		return err
	}
	var del metav1.DeleteOptions
	if rv, ok := opts["resourceVersion"]; ok {
		del.Preconditions = &metav1.Preconditions{ResourceVersion: &rv}
	}
	if uid, ok := opts["uid"]; ok {
		if del.Preconditions == nil {
			del.Preconditions = &metav1.Preconditions{}
		}
		u := types.UID(uid)
		del.Preconditions.UID = &u
	}
	if p, ok := opts["propagation"]; ok {
		policy := metav1.DeletionPropagation(p)
		if !slices.Contains(propagations, policy) {
			return language.UsageError("bad propagation=%s: want Background, Orphan or Foreground", p)
		}
		del.PropagationPolicy = &policy
	}
	return sc.ResourceClient(a, r).Delete(sc.Context(), r.Name, del, r.Subresources()...)
}

func runAnswered(sc *language.Scenario, inv language.Invocation) error {
	actor, verb, object := inv.Args[0], inv.Args[1], inv.Args[2]
	if !slices.Contains(hooks.Verbs, verb) {
		return language.UsageError("unknown verb %q%s; verbs are %s", verb, language.Suggest(verb, hooks.Verbs), strings.Join(hooks.Verbs, ", "))
	}
	parts := strings.SplitN(object, "/", 2)
	gvr, _, err := sc.ControlPlane().Resource(parts[0])
	if err != nil {
		return language.UsageError("%v", err)
	}
	object = gvr.Resource
	if len(parts) == 2 {
		object += "/" + parts[1]
	}
	code, err := strconv.Atoi(inv.Args[3])
	if err != nil || code < 100 || code > 599 {
		return language.UsageError("bad status code %q", inv.Args[3])
	}
	reason := inv.Args[4]
	var msg *regexp.Regexp
	if len(inv.Args) == 6 {
		if msg, err = regexp.Compile(inv.Args[5]); err != nil {
			return language.UsageError("bad MESSAGE regular expression: %v", err)
		}
	}
	tr := sc.Trace()
	var last *record.Exchange
	for _, x := range tr.Own() {
		if x.Actor == actor && x.Verb == verb && x.Object() == object {
			last = x
		}
	}
	if last == nil {
		return fmt.Errorf("%s made no %s call on %s\n%s", actor, verb, object, tr.Tail(20))
	}
	want := fmt.Sprintf("%d %s", code, reason)
	got := fmt.Sprintf("%d %s", last.Code, last.Reason)
	if got != want {
		return language.Mismatched(fmt.Sprintf("the last %s %s %s answered", actor, verb, object), want, got,
			fmt.Errorf("the last %s %s %s (#%d) was answered (-want +got)\n%s%s\n%s",
				actor, verb, object, last.Seq, cmp.Diff(want, got), messageLine(last), tr.Tail(20)))
	}
	if msg != nil && !msg.MatchString(last.Message) {
		return fmt.Errorf("the last %s %s %s (#%d) was answered %s, but its message does not match %q:\n%s",
			actor, verb, object, last.Seq, got, msg, last.Message)
	}
	return nil
}

func messageLine(x *record.Exchange) string {
	if x.Message == "" {
		return ""
	}
	return "message: " + x.Message
}
