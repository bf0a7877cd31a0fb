package harness

import (
	"fmt"
	"strconv"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/racekit/racekit/controller/api/v1alpha1"
)

// Assertions on what the reference controller did that the API objects do
// not show: the registry's bill and the conflicts it counted.
func init() {
	register(&Command{
		Name: "registry-creates", Args: "COUNT", Group: "assert", MinArgs: 1, MaxArgs: 1,
		Summary: "assert that the scenario's external registry created COUNT records: the side effect that must happen once per WebApp lifetime",
		Run:     runRegistryCreates,
	})
	register(&Command{
		Name: "counted-conflicts", Args: "RESOURCE OPERATION COUNT", Group: "assert", MinArgs: 3, MaxArgs: 3,
		Summary: "assert the controller's conflict counter (racekit_controller_conflicts_total) for RESOURCE (webapps, deployments) and OPERATION (update, update-status, add-finalizer, remove-finalizer)",
		Run:     runCountedConflicts,
	})
	register(&Command{
		Name: "condition", Args: "webapps/NAME TYPE STATUS [REASON]", Group: "assert", MinArgs: 3, MaxArgs: 4,
		Summary: "assert that the WebApp's status has condition TYPE with STATUS (True, False, Unknown) and, if given, REASON",
		Run:     runCondition,
	})
}

func runRegistryCreates(sc *Scenario, inv Invocation) error {
	want, err := strconv.Atoi(inv.Args[0])
	if err != nil || want < 0 {
		return usageErr("bad count %q", inv.Args[0])
	}
	if got := sc.registry.Creates(); got != want {
		return fmt.Errorf("the registry created %d records, want %d\n%s", got, want, sc.Trace().Tail(20))
	}
	return nil
}

func runCountedConflicts(sc *Scenario, inv Invocation) error {
	want, err := strconv.Atoi(inv.Args[2])
	if err != nil || want < 0 {
		return usageErr("bad count %q", inv.Args[2])
	}
	if got := sc.metrics.Conflicts(inv.Args[0], inv.Args[1]); got != want {
		return fmt.Errorf("the controller counted %d conflicts on %s %s, want %d\n%s", got, inv.Args[1], inv.Args[0], want, sc.Trace().Tail(20))
	}
	return nil
}

func runCondition(sc *Scenario, inv Invocation) error {
	r, err := sc.object(inv.Args[0])
	if err != nil {
		return usageErr("%v", err)
	}
	if r.gvr.GroupResource() != v1alpha1.GroupVersion.WithResource(v1alpha1.Resource).GroupResource() {
		return usageErr("conditions are asserted on webapps, not %s", r.gvr.Resource)
	}
	obj, err := sc.read(r)
	if err != nil {
		return fmt.Errorf("read %s: %w", r, err)
	}
	var app v1alpha1.WebApp
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &app); err != nil {
		return fmt.Errorf("decode %s: %w", r, err)
	}
	want := []string{inv.Args[1], inv.Args[2]}
	got := []string{inv.Args[1], "<absent>"}
	if c := meta.FindStatusCondition(app.Status.Conditions, inv.Args[1]); c != nil {
		got = []string{c.Type, string(c.Status)}
		if len(inv.Args) == 4 {
			got = append(got, c.Reason)
		}
	}
	if len(inv.Args) == 4 {
		want = append(want, inv.Args[3])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		return fmt.Errorf("%s condition (-want +got)\n%s", r, diff)
	}
	return nil
}
