package assets

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// component is a binary of a real cluster that envtest lacks (a
// controller manager, a scheduler, a kubelet), built like kube-apiserver
// from k8s.io/kubernetes at KubernetesVersion, through a nested module
// under tools/, into Dir beside it. Scenarios run it beside envtest's
// control plane, through the racing proxy.
type component struct {
	tool
	// build says how long the first build takes, for the messages that
	// say to run target.
	build string
}

// The components, each with its make target (tool.target).
var (
	controllerManager = component{tool{ControllerManager, "kube-controller-manager", "k8s.io/kubernetes/cmd/kube-controller-manager", "k8s.io/kubernetes", "v" + KubernetesVersion, "controller-manager"},
		"a few minutes the first time, about 1.5 minutes after kube-apiserver's build"}
	scheduler = component{tool{Scheduler, "kube-scheduler", "k8s.io/kubernetes/cmd/kube-scheduler", "k8s.io/kubernetes", "v" + KubernetesVersion, "scheduler"},
		"about 1.5 minutes after kube-controller-manager's build"}
	kubemark = component{tool{Kubemark, "kubemark", "k8s.io/kubernetes/cmd/kubemark", "k8s.io/kubernetes", "v" + KubernetesVersion, "kubemark"},
		"about 10 minutes on 2 cores after kube-controller-manager's build: the kubelet shares few packages with it"}
)

// components are every component, for the test that keeps their tool
// modules at the pinned version.
var components = []component{controllerManager, scheduler, kubemark}

// matrixComponents are the components a release of the matrix other than
// the default builds: kube-controller-manager, for the real bugs that need
// a garbage collector. Pods that run (kube-scheduler, kubemark) stay on the
// default release.
var matrixComponents = map[string]bool{ControllerManager: true}

// of returns c as rel builds it, or an error when rel does not build c.
func (c component) of(rel Release) (component, error) {
	if rel.Module == "" {
		return c, nil
	}
	if !matrixComponents[c.binary] {
		return component{}, fmt.Errorf("%s is built for Kubernetes %s only, not for %s (%s): scenarios of pods that run stay on the default release", c.binary, KubernetesVersion, rel.Kubernetes, ReleaseEnv)
	}
	c.module, c.version = rel.Module, "v"+rel.Kubernetes
	return c, nil
}

// find returns the path of c's binary: in $KUBEBUILDER_ASSETS when it is
// there (setup-envtest puts none of these there), else in the built
// folder. It fails with ErrMissing, and a message that says what to run,
// when neither has it.
func (c component) find() (string, error) {
	var tried []string
	if dir := os.Getenv(EnvVar); dir != "" {
		if len(missingFiles(dir, c.binary)) == 0 {
			return filepath.Join(dir, c.binary), nil
		}
		tried = append(tried, dir+" (from "+EnvVar+")")
	}
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	if len(missingFiles(dir, c.binary)) == 0 {
		return filepath.Join(dir, c.binary), nil
	}
	tried = append(tried, dir)
	return "", fmt.Errorf("%w: %s is in none of %v: run `make %s` to build it (%s)", ErrMissing, c.binary, tried, c.target, c.build)
}

// install builds c's binary into Dir from its nested module under
// root/tools, unless it is there already. Progress goes to w.
func (c component) install(ctx context.Context, root string, w io.Writer) (string, error) {
	rel, err := Selected()
	if err != nil {
		return "", err
	}
	if c, err = c.of(rel); err != nil {
		return "", err
	}
	dir, err := rel.Dir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, c.binary)
	if len(missingFiles(dir, c.binary)) == 0 {
		fmt.Fprintf(w, "%s: %s %s is ready in %s\n", c.target, c.binary, rel.Kubernetes, dir)
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	fmt.Fprintf(w, "%s: building %s %s into %s (%s)\n", c.target, c.binary, rel.Kubernetes, dir, c.build)
	if err := c.tool.build(ctx, root, dir, w); err != nil {
		return "", rel.buildFailed(err)
	}
	return path, nil
}

// prepare makes c ready: it finds it where find looks, or builds it from
// the racekit checkout at or above wd. Progress goes to w.
func (c component) prepare(ctx context.Context, wd string, w io.Writer) error {
	if path, err := c.find(); err == nil {
		fmt.Fprintf(w, "%s: %s is ready at %s\n", c.target, c.binary, path)
		return nil
	}
	root, err := Root(wd)
	if err != nil {
		return err
	}
	_, err = c.install(ctx, root, w)
	return err
}
