package assets

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ControllerManager is kube-controller-manager's file name. envtest runs no
// controller manager; scenarios that need its controllers (the garbage
// collector, the StatefulSet controller) run it beside envtest's control
// plane, through the racing proxy. It is built like kube-apiserver, from
// k8s.io/kubernetes at KubernetesVersion, into the same folder.
const ControllerManager = "kube-controller-manager"

// controllerManager is the tool that builds it.
var controllerManager = tool{ControllerManager, "kube-controller-manager", "k8s.io/kubernetes/cmd/kube-controller-manager", "k8s.io/kubernetes", "v" + KubernetesVersion}

// FindControllerManager returns the path of kube-controller-manager: in
// $KUBEBUILDER_ASSETS when it is there (setup-envtest puts none there), else
// in the built folder. It fails with ErrMissing, and a message that says
// what to run, when neither has it.
func FindControllerManager() (string, error) {
	var tried []string
	if dir := os.Getenv(EnvVar); dir != "" {
		if len(missingFiles(dir, ControllerManager)) == 0 {
			return filepath.Join(dir, ControllerManager), nil
		}
		tried = append(tried, dir+" (from "+EnvVar+")")
	}
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	if len(missingFiles(dir, ControllerManager)) == 0 {
		return filepath.Join(dir, ControllerManager), nil
	}
	tried = append(tried, dir)
	return "", fmt.Errorf("%w: %s is in none of %v: run `make controller-manager` to build it (a few minutes the first time, about 1.5 minutes after kube-apiserver's build)", ErrMissing, ControllerManager, tried)
}

// BuildControllerManager builds kube-controller-manager into Dir from the
// nested module root/tools/kube-controller-manager, unless it is there
// already. Progress goes to w.
func BuildControllerManager(ctx context.Context, root string, w io.Writer) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, ControllerManager)
	if len(missingFiles(dir, ControllerManager)) == 0 {
		fmt.Fprintf(w, "controller-manager: kube-controller-manager %s is ready in %s\n", KubernetesVersion, dir)
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	fmt.Fprintf(w, "controller-manager: building kube-controller-manager %s into %s (it shares most packages with kube-apiserver's build)\n", KubernetesVersion, dir)
	if err := controllerManager.build(ctx, root, dir, w); err != nil {
		return "", err
	}
	return path, nil
}
