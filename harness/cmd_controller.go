package harness

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/racekit/racekit/controller"
	"github.com/racekit/racekit/controller/api/v1alpha1"
)

// Assertions on what the reference controller did: the registry's bill and
// the conflicts it counted, which the API objects do not show, and what its
// status confirms and whose objects it touched.
func init() {
	register(&Command{
		Name: "registry-creates", Args: "COUNT", Group: "assert", MinArgs: 1, MaxArgs: 1,
		Summary: "assert that the scenario's external registry created COUNT records: the side effect that must happen once per WebApp lifetime",
		Run:     runRegistryCreates,
	})
	register(&Command{
		Name: "counted-conflicts", Args: "RESOURCE OPERATION COUNT [as ACTOR]", Group: "assert", MinArgs: 3, MaxArgs: 5,
		Summary: "assert the controller's conflict counter (racekit_controller_conflicts_total) for RESOURCE (webapps, deployments) and OPERATION (update, update-status, add-finalizer, remove-finalizer), of the instance that runs as ACTOR (default controller)",
		Run:     runCountedConflicts,
	})
	register(&Command{
		Name: "confirmed", Args: "webapps/NAME GENERATION REPLICAS", Group: "assert", MinArgs: 3, MaxArgs: 3,
		Summary: "assert that the WebApp's status confirms GENERATION, with REPLICAS replicas and Ready True: what the controller last finished, " + readsState,
		Run:     runConfirmed,
	})
	register(&Command{
		Name: "owned-by", Args: "RESOURCE/NAME RESOURCE/NAME", Group: "assert", MinArgs: 2, MaxArgs: 2,
		Summary: "assert that the first object's controlling ownerReference names the second object, uid and all, each " + readsState,
		Run:     runOwnedBy,
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

var counterResources = []string{controller.ResourceWebApps, controller.ResourceDeployments}

var counterOperations = []string{controller.OpUpdate, controller.OpUpdateStatus, controller.OpAddFinalizer, controller.OpRemoveFinalizer}

func runCountedConflicts(sc *Scenario, inv Invocation) error {
	resource, op := inv.Args[0], inv.Args[1]
	if !contains(counterResources, resource) {
		return usageErr("unknown resource %q%s; the counter has %s", resource, suggest(resource, counterResources), strings.Join(counterResources, ", "))
	}
	if !contains(counterOperations, op) {
		return usageErr("unknown operation %q%s; the counter has %s", op, suggest(op, counterOperations), strings.Join(counterOperations, ", "))
	}
	want, err := strconv.Atoi(inv.Args[2])
	if err != nil || want < 0 {
		return usageErr("bad count %q", inv.Args[2])
	}
	actor, err := asActor(inv.Args[3:])
	if err != nil {
		return err
	}
	sc.mu.Lock()
	in, ok := sc.instances[actor]
	sc.mu.Unlock()
	if !ok {
		return fmt.Errorf("no controller runs as %s, so it has no counter: it has not reconciled anything yet", actor)
	}
	if got := in.metrics.Conflicts(resource, op); got != want {
		return fmt.Errorf("%s counted %d conflicts on %s %s, want %d\n%s", actor, got, op, resource, want, sc.Trace().Tail(20))
	}
	return nil
}

func runConfirmed(sc *Scenario, inv Invocation) error {
	r, err := sc.object(inv.Args[0])
	if err != nil {
		return usageErr("%v", err)
	}
	if r.gvr.GroupResource() != v1alpha1.GroupVersion.WithResource(v1alpha1.Resource).GroupResource() {
		return usageErr("status is confirmed on webapps, not %s", r.gvr.Resource)
	}
	gen, err := strconv.ParseInt(inv.Args[1], 10, 64)
	if err != nil || gen < 0 {
		return usageErr("bad generation %q: want a whole number", inv.Args[1])
	}
	replicas, err := strconv.ParseInt(inv.Args[2], 10, 32)
	if err != nil || replicas < 0 {
		return usageErr("bad replica count %q: want a whole number", inv.Args[2])
	}
	app, err := sc.webApp(r)
	if err != nil {
		return err
	}
	ready := "<absent>"
	if c := meta.FindStatusCondition(app.Status.Conditions, v1alpha1.ConditionReady); c != nil {
		ready = string(c.Status) + " " + c.Reason
	}
	want := []string{fmt.Sprint("observedGeneration ", gen), fmt.Sprint("replicas ", replicas), "Ready True " + v1alpha1.ReasonReconciled}
	got := []string{fmt.Sprint("observedGeneration ", app.Status.ObservedGeneration), fmt.Sprint("replicas ", app.Status.Replicas), "Ready " + ready}
	if slices.Equal(want, got) {
		return nil
	}
	why := ""
	if claim, ok := statusClaim(app); ok {
		why = "\n  rule broken: " + claim
	}
	return fmt.Errorf("%s status (-want +got)\n%s%s\n%s", r, cmp.Diff(want, got), why, sc.Trace().Tail(20))
}

// webApp reads the WebApp r as the API server holds it (Scenario.read).
func (sc *Scenario) webApp(r ref) (*v1alpha1.WebApp, error) {
	obj, err := sc.read(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", r, err)
	}
	var app v1alpha1.WebApp
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &app); err != nil {
		return nil, fmt.Errorf("decode %s: %w", r, err)
	}
	return &app, nil
}

func runOwnedBy(sc *Scenario, inv Invocation) error {
	r, err := sc.object(inv.Args[0])
	if err != nil {
		return usageErr("%v", err)
	}
	o, err := sc.object(inv.Args[1])
	if err != nil {
		return usageErr("%v", err)
	}
	obj, err := sc.read(r)
	if err != nil {
		return fmt.Errorf("read %s: %w", r, err)
	}
	owner, err := sc.read(o)
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
		return fmt.Errorf("%s controlling owner (-want +got)\n%s\n%s", r, cmp.Diff(want, got), sc.Trace().Tail(20))
	}
	return nil
}
