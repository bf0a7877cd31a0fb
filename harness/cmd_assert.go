package harness

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func init() {
	register(&Command{
		Name: "conflicts", Args: "ACTOR VERB RESOURCE/NAME[/SUB] COUNT", Group: "assert", MinArgs: 4, MaxArgs: 4,
		Summary: "assert that the API server answered COUNT of ACTOR's VERB calls on the object with 409 Conflict, as recorded on the wire",
		Run:     runConflicts,
	})
	register(&Command{
		Name: "wire", Args: "ACTOR VERB RESOURCE/NAME[/SUB] CODE COUNT", Group: "assert", MinArgs: 5, MaxArgs: 5,
		Summary: "assert that the API server answered COUNT of ACTOR's VERB calls on the object with HTTP status CODE, as recorded on the wire",
		Run:     runWire,
	})
	register(&Command{
		Name: "field", Args: "RESOURCE/NAME PATH VALUE", Group: "assert", MinArgs: 3, MaxArgs: 3,
		Summary: "assert that the object's field at the dotted PATH (spec.replicas) has VALUE, read fresh from the API server",
		Run:     runField,
	})
	register(&Command{
		Name: "annotation", Args: "RESOURCE/NAME KEY[=VALUE]", Group: "assert", MinArgs: 2, MaxArgs: 2,
		Summary:  "assert that the object carries the annotation (with VALUE, if given); \"!\" asserts that it does not",
		Negation: NegSelf, Run: runAnnotation,
	})
	register(&Command{
		Name: "fired", Args: "HOOK COUNT", Group: "assert", MinArgs: 2, MaxArgs: 2,
		Summary: "assert that the HOOKth armed hook has fired COUNT times (a hook that never fires fails the scenario anyway)",
		Run:     runFired,
	})
	register(&Command{
		Name: "trace", Args: "", Group: "assert", MinArgs: 0, MaxArgs: 0,
		Summary: "print the normalized trace to stdout; compare it with cmp stdout trace.golden (go test -update rewrites it)",
		Run:     runTrace,
	})
}

func runConflicts(sc *Scenario, inv Invocation) error {
	return sc.assertWire(inv.Args[0], inv.Args[1], inv.Args[2], "409", inv.Args[3])
}

func runWire(sc *Scenario, inv Invocation) error {
	return sc.assertWire(inv.Args[0], inv.Args[1], inv.Args[2], inv.Args[3], inv.Args[4])
}

func (sc *Scenario) assertWire(actor, verb, object, codeArg, countArg string) error {
	code, err := strconv.Atoi(codeArg)
	if err != nil || code < 100 || code > 599 {
		return usageErr("bad status code %q", codeArg)
	}
	want, err := strconv.Atoi(countArg)
	if err != nil || want < 0 {
		return usageErr("bad count %q: want a whole number", countArg)
	}
	r, err := sc.object(object)
	if err != nil {
		return usageErr("%v", err)
	}
	tr := sc.Trace()
	if got := tr.Count(actor, verb, r.String(), code); got != want {
		return fmt.Errorf("want %d %d responses to %s %s %s on the wire, saw %d\n%s",
			want, code, actor, verb, r, got, tr.Tail(20))
	}
	return nil
}

func runField(sc *Scenario, inv Invocation) error {
	r, err := sc.object(inv.Args[0])
	if err != nil {
		return usageErr("%v", err)
	}
	obj, err := sc.read(r)
	if err != nil {
		return fmt.Errorf("read %s: %w", r, err)
	}
	path := strings.Split(strings.TrimPrefix(inv.Args[1], "."), ".")
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if err != nil {
		return fmt.Errorf("%s %s: %w", r, inv.Args[1], err)
	}
	got := "<absent>"
	if found {
		got = render(v)
	}
	if want := inv.Args[2]; got != want {
		return fmt.Errorf("%s %s: (-want +got)\n%s\n%s", r, inv.Args[1], cmp.Diff(want, got), sc.Trace().Tail(20))
	}
	return nil
}

// render prints a field value the way scenarios write it: scalars bare,
// anything else as JSON.
func render(v any) string {
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
	r, err := sc.object(inv.Args[0])
	if err != nil {
		return usageErr("%v", err)
	}
	key, want, withValue := strings.Cut(inv.Args[1], "=")
	obj, err := sc.read(r)
	if err != nil {
		return fmt.Errorf("read %s: %w", r, err)
	}
	got, present := obj.GetAnnotations()[key]
	holds := present && (!withValue || got == want)
	switch {
	case inv.Neg && holds:
		return fmt.Errorf("%s: want no annotation %s, but it is there: %q\n%s", r, inv.Args[1], got, sc.Trace().Tail(20))
	case !inv.Neg && !present:
		return fmt.Errorf("%s: annotation %s is missing: the other writer's change was lost\n%s", r, key, sc.Trace().Tail(20))
	case !inv.Neg && !holds:
		return fmt.Errorf("%s: annotation %s (-want +got)\n%s", r, key, cmp.Diff(want, got))
	}
	return nil
}

func runFired(sc *Scenario, inv Invocation) error {
	id, err := strconv.Atoi(inv.Args[0])
	if err != nil {
		return usageErr("bad hook number %q: hooks are numbered 1, 2, ... in the order they were armed", inv.Args[0])
	}
	want, err := strconv.Atoi(inv.Args[1])
	if err != nil || want < 0 {
		return usageErr("bad count %q", inv.Args[1])
	}
	h, ok := sc.hookByID(id)
	if !ok {
		return usageErr("no hook %d has been armed", id)
	}
	if got := sc.hooks.Fired(h.Armed); got != want {
		return fmt.Errorf("hook %d (%s, armed at %s) fired %d times, want %d\n%s", id, h.Hook.String(), h.pos, got, want, sc.Trace().Tail(20))
	}
	return nil
}

func runTrace(sc *Scenario, inv Invocation) error {
	_, err := fmt.Fprint(inv.Stdout, sc.Trace().Normalize())
	return err
}
