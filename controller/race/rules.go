package race

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/controller/api/v1alpha1"
)

// The rules the reference controller's state must keep, beyond the wire's:
// a failed reconcile names those it broke.
const (
	ruleGenerationLost = "status without a generation check"
	ruleNotOwned       = "no owner check"
)

// writeVerbs are the verbs that change an object.
var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true}

// check judges what span's WebApp and its Deployment are now against what
// span's reconcile did: a Ready status confirms the replicas of the
// generation it names, and the controller wrote only a Deployment the
// WebApp controls.
func check(sc *racekit.Scenario, span racekit.Span) []racekit.Finding {
	name := span.Request.Name
	obj, err := sc.Read(v1alpha1.Resource + "/" + name)
	if err != nil {
		return nil // gone, say: nothing to check
	}
	app, err := webApp(obj)
	if err != nil {
		return nil
	}
	var out []racekit.Finding
	if text, ok := statusClaim(app); ok {
		out = append(out, racekit.Finding{Object: v1alpha1.Resource + "/" + name + "/status", Rule: ruleGenerationLost, Text: text})
	}
	deployment := "deployments/" + name
	wrote := false
	for _, x := range sc.Trace().Exchanges() {
		if x.Seq >= span.From && x.Seq <= span.To && x.Actor == span.Actor && x.Object() == deployment && writeVerbs[x.Verb] && x.Code < 300 {
			wrote = true
		}
	}
	if !wrote {
		return out
	}
	dep, err := sc.Read(deployment)
	if err != nil {
		return out
	}
	if ref := metav1.GetControllerOfNoCopy(dep); ref != nil && ref.UID != app.UID {
		out = append(out, racekit.Finding{Object: deployment, Rule: ruleNotOwned,
			Text: fmt.Sprintf("%s wrote %s, whose controlling owner is %s %s, not this WebApp: a controller touches only what it controls", span.Actor, deployment, ref.Kind, ref.Name)})
	}
	return out
}

// statusClaim says what is wrong with app's status when it says Ready for
// its current generation but reports replicas that generation does not ask
// for: a generation confirmed with another generation's conclusions.
func statusClaim(app *v1alpha1.WebApp) (string, bool) {
	st := app.Status
	var ready *metav1.Condition
	for i := range st.Conditions {
		if st.Conditions[i].Type == v1alpha1.ConditionReady {
			ready = &st.Conditions[i]
		}
	}
	if ready == nil || ready.Status != metav1.ConditionTrue || st.ObservedGeneration != app.Generation || st.Replicas == app.Spec.Replicas {
		return "", false
	}
	return fmt.Sprintf("status confirms generation %d with %d replicas, but generation %d asks for %d: it confirmed a generation it did not act on, with conclusions from an earlier spec",
		st.ObservedGeneration, st.Replicas, app.Generation, app.Spec.Replicas), true
}
