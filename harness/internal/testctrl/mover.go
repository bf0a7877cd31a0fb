package testctrl

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Move runs the mover as a client-go controller runs on its own: an
// informer on the namespace's ConfigMaps, a workqueue and one worker. A
// job is a ConfigMap whose data.from and data.to name two others; its sync
// moves from's data.value into a new ConfigMap to, deletes from, marks
// the job data.done=true and records an Event.
//
// safe says in which order it takes the two steps. Unsafe, it deletes
// from and then creates to, with the value it read before: killed between
// the two, it loses the value, since the restarted mover finds from gone
// and creates to empty (a crash between two steps, Sieve's
// intermediate-state bug). Safe, it creates to first, and a restart that
// finds to there already goes on to the delete.
func Move(ctx context.Context, cfg *rest.Config, namespace string, safe bool) error {
	return runConfigMaps(ctx, cfg, namespace, func(kube kubernetes.Interface, lister corev1listers.ConfigMapLister) syncFunc {
		return (&mover{kube: kube.CoreV1(), lister: lister, safe: safe}).sync
	})
}

// mover is the sync of Move.
type mover struct {
	kube   corev1client.CoreV1Interface
	lister corev1listers.ConfigMapLister
	safe   bool
}

func (m *mover) sync(ctx context.Context, key string) error {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	job, err := m.lister.ConfigMaps(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || job.Data["from"] == "" || job.Data["done"] == "true" {
		return err
	}
	cms := m.kube.ConfigMaps(ns)
	// The value is read live: what the lister holds of from may lag.
	from, err := cms.Get(ctx, job.Data["from"], metav1.GetOptions{})
	found := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	var value string
	if found {
		value = from.Data["value"]
	}
	to := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: job.Data["to"]}, Data: map[string]string{"value": value}}
	create := func() error {
		if _, err := cms.Create(ctx, to, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	}
	remove := func() error {
		if err := cms.Delete(ctx, job.Data["from"], metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	}
	steps := []func() error{remove, create}
	switch {
	case m.safe && found:
		steps = []func() error{create, remove}
	case m.safe:
		// Moved already, by a life that died before it marked the job.
		steps = nil
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	job = job.DeepCopy()
	job.Data["done"] = "true"
	if _, err := cms.Update(ctx, job, metav1.UpdateOptions{}); err != nil {
		return err
	}
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: job.Name + "."},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: job.Name, UID: job.UID},
		Reason:         "Moved", Message: "moved " + job.Data["from"] + " to " + job.Data["to"], Type: corev1.EventTypeNormal,
	}
	_, err = m.kube.Events(ns).Create(ctx, ev, metav1.CreateOptions{})
	return err
}
