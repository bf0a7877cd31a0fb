package racekit_test

import (
	"context"
	"fmt"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/racekit/racekit"
)

// seen is a reconciler written the kubebuilder way: it copies a
// ConfigMap's data.value to data.seen with an update that carries the
// resourceVersion it read, and returns a conflict for the manager to
// requeue.
type seen struct{ client.Client }

func (r *seen) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if cm.Data["seen"] == cm.Data["value"] {
		return reconcile.Result{}, nil
	}
	cm.Data["seen"] = cm.Data["value"]
	return reconcile.Result{}, r.Update(ctx, &cm)
}

// ExampleManages registers a reconciler that scenarios both reconcile
// step by step and start in a controller-runtime manager of its own, as
// its main runs it: testdata/running/seen_conflict.txtar starts it, stages
// a 409 on its update, and awaits the write that follows.
func ExampleManages() {
	build := func(c client.Client) reconcile.Reconciler { return &seen{c} }
	seenController := racekit.Reconciler("seen", clientgoscheme.Scheme, &corev1.ConfigMap{}, build,
		racekit.Manages(func(mgr manager.Manager) error {
			// What the project's SetupWithManager does.
			return builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Complete(build(mgr.GetClient()))
		}))
	results, err := racekit.Play(racekit.Setup{Dir: "testdata/running", Controllers: []*racekit.Controller{seenController}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range results {
		fmt.Println(r.Name, r.Passed)
	}
	// Output:
	// seen_conflict true
}

// ExampleCheckNoise runs testdata/running's scenario with and without
// noise that cannot matter, and prints how many verdicts each run gave and
// how many the noise changed: none, or an oracle reads what it should not.
func ExampleCheckNoise() {
	build := func(c client.Client) reconcile.Reconciler { return &seen{c} }
	seenController := racekit.Reconciler("seen", clientgoscheme.Scheme, &corev1.ConfigMap{}, build,
		racekit.Manages(func(mgr manager.Manager) error {
			return builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Complete(build(mgr.GetClient()))
		}))
	checks, err := racekit.CheckNoise(racekit.Setup{Dir: "testdata/running", Controllers: []*racekit.Controller{seenController}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range checks {
		fmt.Println(filepath.Base(c.File), len(c.Plain), "verdicts,", len(c.Differences), "changed by the noise")
	}
	// Output:
	// seen_conflict.txtar 2 verdicts, 0 changed by the noise
}

// ExampleNamingRules is the failure of a project's own assertion (a
// Command of Setup.Commands) that names the rule it found broken: the
// message says so, as a failed reconcile's does, and the finding rides on
// the error as a value, which the scenario's failure (Failure.Findings)
// and CheckNoise read instead of the message.
func ExampleNamingRules() {
	broken := racekit.Finding{Object: "configmaps/c", Rule: "stale copy", Text: "data.seen is 1, but data.value is 2"}
	err := racekit.NamingRules(fmt.Errorf("configmaps/c was not copied\n  rule broken: %s", broken), broken)
	fmt.Println(err)
	// Output:
	// configmaps/c was not copied
	//   rule broken: data.seen is 1, but data.value is 2 (stale copy)
}
