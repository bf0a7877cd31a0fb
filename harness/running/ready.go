package running

import (
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
)

// Waiting for what a cluster's parts make of an object: a pod Running and
// Ready, a node Ready and schedulable, a StatefulSet whose replicas are
// all there and Ready. How many status writes that takes differs from run
// to run (a kubelet may report a pod's container creating, then running,
// or running at once), so no count of calls can say it; ready reads the
// object instead, as the API server holds it, each time the wire shows an
// answer about it.
var readyCommands = []*language.Command{
	{
		Name: "ready", Args: "pods/NAME|nodes/NAME|statefulsets/NAME [within=DURATION]", Group: "run", MinArgs: 1, MaxArgs: 2,
		Summary: "wait until the pod, node or StatefulSet is ready, as the API server holds it",
		Detail: "wait until the object is ready, as the API server holds it: a pod Running with its condition Ready True; a node with its condition Ready True and no not-ready taint (node.kubernetes.io/not-ready), so that the scheduler may bind pods to it; a StatefulSet whose status has observed its generation and counts spec.replicas replicas, all of them Ready; " +
			"the object is read (as assertions read it, unrecorded) when ready begins and again after each answer on the wire about it, never on a timer; " +
			"an object that does not exist yet is waited for; fails at once when a pod has ended (Succeeded or Failed), or when nothing runs on its own that could change it, and after DURATION (default " + DefaultWait.String() + ") with what the object shows",
		Run: runReady,
	},
}

// readiness says whether obj is ready: "" when it is, else what it shows
// instead; final is set when it never will be.
type readiness func(obj *unstructured.Unstructured) (notYet string, final bool)

// readinessOf are the kinds ready knows, by resource.
var readinessOf = map[string]readiness{
	"pods":         podReady,
	"nodes":        nodeReady,
	"statefulsets": statefulSetReady,
}

func runReady(sc *language.Scenario, inv language.Invocation) error {
	ref, within, err := objectWait(sc, inv)
	if err != nil {
		return err
	}
	ready, ok := readinessOf[ref.GVR.Resource]
	if !ok || ref.Subresource != "" || ref.Name == "" {
		return language.UsageError("ready knows pods/NAME, nodes/NAME and statefulsets/NAME, not %s", inv.Args[0])
	}
	object := inv.Args[0]
	answered := newAnswers(sc, ref)
	shows := "nothing yet"
	return waitFor(sc, within, func() (bool, error) {
		if !answered() {
			return false, nil
		}
		obj, err := sc.ReadRef(ref)
		notYet, final := "", false
		switch {
		case apierrors.IsNotFound(err):
			// What runs may create it yet (a StatefulSet's next pod).
			notYet = "that it does not exist"
		case err != nil:
			return false, fmt.Errorf("read %s: %w", object, err)
		default:
			if notYet, final = ready(obj); notYet == "" {
				return true, nil
			}
		}
		shows = notYet
		if final {
			return false, fmt.Errorf("awaited %s ready, but it never will be: %s\n%s", object, notYet, sc.Trace().Tail(15))
		}
		if len(runningLives(sc)) == 0 {
			return false, fmt.Errorf("awaited %s ready, but nothing runs on its own that could make it so (%s): spawn the scheduler, a node and controller-manager first\n%s", object, notYet, sc.Trace().Tail(15))
		}
		return false, nil
	}, func() error {
		return fmt.Errorf("awaited %s ready for %v; it shows %s%s\n%s", object, within, shows, readyHint(ref.GVR.Resource), sc.Trace().Tail(15))
	})
}

// objectWait reads the line of a wait on one object, ready's or
// finalized's: RESOURCE/NAME [within=DURATION], the bound defaulting to
// the scenario's wait timeout.
func objectWait(sc *language.Scenario, inv language.Invocation) (language.Ref, time.Duration, error) {
	o, err := language.ParseOptions(inv.Args[1:], []string{"within"})
	if err != nil {
		return language.Ref{}, 0, err
	}
	within, err := language.DurationOption(o, "within", waitTimeout(sc))
	if err != nil {
		return language.Ref{}, 0, err
	}
	ref, err := sc.Object(inv.Args[0])
	return ref, within, err
}

// newAnswers returns a func that reports whether the wire has shown an
// answer about ref's object (in the scenario's namespace) since it last
// reported one, true the first time: when ready and finalized read the
// object again, never on a timer.
func newAnswers(sc *language.Scenario, ref language.Ref) func() bool {
	seen := -1 // the last exchange about the object read after
	return func() bool {
		last := 0
		sc.Recorder().Scan(func(x *record.Exchange) {
			if x.Code != 0 && !x.Foreign && x.Resource == ref.GVR.Resource && x.Name == ref.Name {
				last = x.Seq
			}
		})
		if last == seen {
			return false
		}
		seen = last
		return true
	}
}

// readyHint says what makes an object of resource ready, for a wait that
// ran out of time.
func readyHint(resource string) string {
	switch resource {
	case "pods":
		return "; a pod runs once the scheduler (scheduler) has bound it to a node of the scenario's (node NAME) and that node's kubelet has started it; the scheduler binds none to a node that carries the not-ready taint, which controller-manager's node-lifecycle-controller takes off"
	case "nodes":
		return "; a node's kubelet (node NAME) reports it Ready, and controller-manager's node-lifecycle-controller then takes its not-ready taint off: run controller-manager controllers=...,node-lifecycle-controller"
	}
	return "; a StatefulSet's pods are made by controller-manager's statefulset controller, scheduled by scheduler and run by a node's kubelet (node NAME)"
}

// podReady: Running, with the condition Ready True.
func podReady(obj *unstructured.Unstructured) (string, bool) {
	phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
	cond, _ := condition(obj, "Ready")
	if phase == "Running" && cond == "True" {
		return "", false
	}
	node, _, _ := unstructured.NestedString(obj.Object, "spec", "nodeName")
	if phase == "" {
		phase = "none"
	}
	if node == "" {
		node = "none"
	}
	shows := fmt.Sprintf("phase %s, node %s, conditions %s", phase, node, conditions(obj))
	return shows, phase == "Succeeded" || phase == "Failed"
}

// nodeReady: the condition Ready True, and no not-ready taint.
func nodeReady(obj *unstructured.Unstructured) (string, bool) {
	cond, _ := condition(obj, "Ready")
	taints, _, _ := unstructured.NestedSlice(obj.Object, "spec", "taints")
	var keys []string
	tainted := false
	for _, t := range taints {
		m, _ := t.(map[string]any)
		key, _ := m["key"].(string)
		effect, _ := m["effect"].(string)
		keys = append(keys, key+":"+effect)
		tainted = tainted || key == notReadyTaint
	}
	if cond == "True" && !tainted {
		return "", false
	}
	return fmt.Sprintf("conditions %s, taints [%s]", conditions(obj), strings.Join(keys, " ")), false
}

// notReadyTaint is the taint the API server gives a new node (admission
// plugin TaintNodesByCondition) and the node lifecycle controller keeps on
// a node that is not Ready.
const notReadyTaint = "node.kubernetes.io/not-ready"

// statefulSetReady: its status has observed its generation, and counts
// spec.replicas replicas (pods that exist, terminating ones too), all of
// them Ready.
func statefulSetReady(obj *unstructured.Unstructured) (string, bool) {
	want, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if !found {
		want = 1
	}
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	replicas, _, _ := unstructured.NestedInt64(obj.Object, "status", "replicas")
	ready, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas")
	if observed >= obj.GetGeneration() && replicas == want && ready == want {
		return "", false
	}
	return fmt.Sprintf("generation %d observed %d, spec.replicas %d, status.replicas %d, readyReplicas %d", obj.GetGeneration(), observed, want, replicas, ready), false
}

// condition returns the status of obj's condition typ, and whether it has
// one.
func condition(obj *unstructured.Unstructured, typ string) (string, bool) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			return s, true
		}
	}
	return "", false
}

// conditions renders obj's conditions as [Type=Status (Reason: message)
// ...], sorted by type.
func conditions(obj *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	var out []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		s := fmt.Sprintf("%v=%v", m["type"], m["status"])
		reason, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		switch {
		case reason != "" && msg != "":
			s += " (" + reason + ": " + msg + ")"
		case reason != "":
			s += " (" + reason + ")"
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return "[" + strings.Join(out, " ") + "]"
}
