package racekit_test

import (
	"context"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/racekit/racekit"
)

// TestMain stops the control plane the tests start, and runs the test
// binary as a child program when a scenario spawns it (runChild).
func TestMain(m *testing.M) {
	if runChild() {
		os.Exit(0)
	}
	onPath()
	racekit.Main(m)
}

// TestClientGo races a controller written with client-go alone, registered
// with racekit.ClientGo: its clientset is built from the rest.Config racekit
// hands it, so its calls fire hooks and show in the trace, and its sync
// function's error is what the reconcile returns. The scenarios are in
// testdata/clientgo.
func TestClientGo(t *testing.T) {
	racekit.Run(t, racekit.Setup{
		Dir:         "testdata/clientgo",
		Controllers: []*racekit.Controller{racekit.ClientGo("copier", scheme.Scheme, &corev1.ConfigMap{}, newCopier)},
	})
}

// newCopier builds a client-go controller that copies a ConfigMap's
// data.value to data.seen, re-reading and re-deciding inside
// retry.RetryOnConflict.
func newCopier(cfg *rest.Config) (racekit.SyncFunc, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, key types.NamespacedName) error {
		return retry.RetryOnConflict(racekit.ZeroDelayRetry(), func() error {
			cm, err := cs.CoreV1().ConfigMaps(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			if cm.Data["seen"] == cm.Data["value"] {
				return nil
			}
			cm.Data["seen"] = cm.Data["value"]
			_, err = cs.CoreV1().ConfigMaps(key.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
			return err
		})
	}, nil
}
