package assets

import (
	"context"
	"io"
)

// ControllerManager is kube-controller-manager's file name. envtest runs no
// controller manager; scenarios that need its controllers (the garbage
// collector, the StatefulSet controller, the node lifecycle controller)
// run it beside envtest's control plane, through the racing proxy. It is
// built like kube-apiserver, from k8s.io/kubernetes at KubernetesVersion,
// into the same folder.
const ControllerManager = "kube-controller-manager"

// FindControllerManager returns the path of kube-controller-manager: in
// $KUBEBUILDER_ASSETS when it is there (setup-envtest puts none there), else
// in the built folder. It fails with ErrMissing, and a message that says
// what to run, when neither has it.
func FindControllerManager() (string, error) { return controllerManager.find() }

// BuildControllerManager builds kube-controller-manager into Dir from the
// nested module root/tools/kube-controller-manager, unless it is there
// already. Progress goes to w.
func BuildControllerManager(ctx context.Context, root string, w io.Writer) (string, error) {
	return controllerManager.install(ctx, root, w)
}
