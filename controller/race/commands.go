package race

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/controller"
	"github.com/racekit/racekit/controller/api/v1alpha1"
)

// Commands returns the reference controller's own assertions: the
// registry's bill and the conflicts the controller counted, which the API
// objects do not show, and what a WebApp's status confirms.
func Commands() []*racekit.Command {
	return []*racekit.Command{
		{
			Name: "registry-creates", Args: "COUNT", Group: "assert", MinArgs: 1, MaxArgs: 1,
			Summary: "assert that the scenario's external registry created COUNT records: the side effect that must happen once per WebApp lifetime (reference controller)",
			Run:     runRegistryCreates,
		},
		{
			Name: "registry-records", Args: "COUNT", Group: "assert", MinArgs: 1, MaxArgs: 1,
			Summary: "assert that the scenario's external registry holds COUNT records now: registered and not deregistered since; a record no WebApp owns is one a deletion leaked (reference controller)",
			Run:     runRegistryRecords,
		},
		{
			Name: "counted-conflicts", Args: "RESOURCE OPERATION COUNT [as ACTOR]", Group: "assert", MinArgs: 3, MaxArgs: 5,
			Summary: "assert the reference controller's conflict counter for RESOURCE and OPERATION, of the instance that runs as ACTOR",
			Detail:  "assert the reference controller's conflict counter (racekit_controller_conflicts_total) for RESOURCE (webapps, deployments) and OPERATION (update, update-status, add-finalizer, remove-finalizer), of the instance that runs as ACTOR (default controller)",
			Run:     runCountedConflicts,
		},
		{
			Name: "confirmed", Args: "webapps/NAME GENERATION REPLICAS", Group: "assert", MinArgs: 3, MaxArgs: 3,
			Summary: "assert that the WebApp's status confirms GENERATION, with REPLICAS replicas and Ready True: what the reference controller last finished, read as the API server holds it",
			Run:     runConfirmed,
		},
	}
}

func runRegistryCreates(sc *racekit.Scenario, inv racekit.Invocation) error {
	return registryCount(sc, inv, "created", (*registryServer).Creates)
}

func runRegistryRecords(sc *racekit.Scenario, inv racekit.Invocation) error {
	return registryCount(sc, inv, "holds", (*registryServer).Records)
}

// registryCount compares what count says of the scenario's registry with
// the COUNT argument; verb says what the count is in the message.
func registryCount(sc *racekit.Scenario, inv racekit.Invocation, verb string, count func(*registryServer) int) error {
	want, err := strconv.Atoi(inv.Args[0])
	if err != nil || want < 0 {
		return racekit.UsageError("bad count %q", inv.Args[0])
	}
	srv, err := registryOf(sc)
	if err != nil {
		return err
	}
	if got := count(srv); got != want {
		return fmt.Errorf("the registry %s %d records, want %d\n%s", verb, got, want, sc.Trace().Tail(20))
	}
	return nil
}

var counterResources = []string{controller.ResourceWebApps, controller.ResourceDeployments}

var counterOperations = []string{controller.OpUpdate, controller.OpUpdateStatus, controller.OpAddFinalizer, controller.OpRemoveFinalizer}

func runCountedConflicts(sc *racekit.Scenario, inv racekit.Invocation) error {
	resource, op := inv.Args[0], inv.Args[1]
	if !slices.Contains(counterResources, resource) {
		return racekit.UsageError("unknown resource %q%s; the counter has %s", resource, racekit.Suggest(resource, counterResources), strings.Join(counterResources, ", "))
	}
	if !slices.Contains(counterOperations, op) {
		return racekit.UsageError("unknown operation %q%s; the counter has %s", op, racekit.Suggest(op, counterOperations), strings.Join(counterOperations, ", "))
	}
	want, err := strconv.Atoi(inv.Args[2])
	if err != nil || want < 0 {
		return racekit.UsageError("bad count %q", inv.Args[2])
	}
	actor, err := racekit.AsActor(inv.Args[3:])
	if err != nil {
		return err
	}
	in, ok := racekit.InstanceOf(sc, Name, actor)
	if !ok {
		return fmt.Errorf("no reference controller runs as %s, so it has no counter: it has not reconciled anything yet", actor)
	}
	r, ok := in.Reconciler().(*reconciler)
	if !ok {
		return fmt.Errorf("the controller that runs as %s is not the reference controller", actor)
	}
	if got := r.metrics.Conflicts(resource, op); got != want {
		return fmt.Errorf("%s counted %d conflicts on %s %s, want %d\n%s", actor, got, op, resource, want, sc.Trace().Tail(20))
	}
	return nil
}

func runConfirmed(sc *racekit.Scenario, inv racekit.Invocation) error {
	res, name, ok := strings.Cut(inv.Args[0], "/")
	if !ok || (res != v1alpha1.Resource && res != "webapp") || name == "" || strings.Contains(name, "/") {
		return racekit.UsageError("status is confirmed on webapps/NAME, not %s", inv.Args[0])
	}
	gen, err := strconv.ParseInt(inv.Args[1], 10, 64)
	if err != nil || gen < 0 {
		return racekit.UsageError("bad generation %q: want a whole number", inv.Args[1])
	}
	replicas, err := strconv.ParseInt(inv.Args[2], 10, 32)
	if err != nil || replicas < 0 {
		return racekit.UsageError("bad replica count %q: want a whole number", inv.Args[2])
	}
	obj, err := sc.Read(v1alpha1.Resource + "/" + name)
	if err != nil {
		return fmt.Errorf("read webapps/%s: %w", name, err)
	}
	app, err := webApp(obj)
	if err != nil {
		return fmt.Errorf("decode webapps/%s: %w", name, err)
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
	var broken []racekit.Finding
	if claim, ok := statusClaim(app); ok {
		why = "\n  rule broken: " + claim
		broken = append(broken, racekit.Finding{Object: v1alpha1.Resource + "/" + name + "/status", Rule: ruleGenerationLost, Text: claim})
	}
	return racekit.NamingRules(fmt.Errorf("webapps/%s status (-want +got)\n%s%s\n%s", name, cmp.Diff(want, got), why, sc.Trace().Tail(20)), broken...)
}
