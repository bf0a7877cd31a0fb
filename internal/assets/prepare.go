package assets

import (
	"context"
	"fmt"
	"io"
	"os"
)

// Prepare makes the control-plane binaries ready for envtest. With
// $KUBEBUILDER_ASSETS set it only checks that folder, since the user chose
// it; otherwise it builds what is missing from the racekit checkout at or
// above wd. Progress goes to w. Both `racekit envtest` and `make envtest`
// run it.
func Prepare(ctx context.Context, wd string, w io.Writer) error {
	if dir := os.Getenv(EnvVar); dir != "" {
		if _, err := Find(); err != nil {
			return err
		}
		fmt.Fprintf(w, "envtest: using %s=%s; nothing to build\n", EnvVar, dir)
		return nil
	}
	root, err := Root(wd)
	if err != nil {
		return err
	}
	_, err = Build(ctx, root, w)
	return err
}

// PrepareControllerManager makes kube-controller-manager ready: it finds it
// where FindControllerManager looks, or builds it from the racekit checkout
// at or above wd. Progress goes to w. make controller-manager runs it.
func PrepareControllerManager(ctx context.Context, wd string, w io.Writer) error {
	return controllerManager.prepare(ctx, wd, w)
}

// PrepareScheduler makes kube-scheduler ready, as PrepareControllerManager
// does kube-controller-manager. make scheduler runs it.
func PrepareScheduler(ctx context.Context, wd string, w io.Writer) error {
	return scheduler.prepare(ctx, wd, w)
}

// PrepareKubemark makes kubemark ready, as PrepareControllerManager does
// kube-controller-manager. make kubemark runs it.
func PrepareKubemark(ctx context.Context, wd string, w io.Writer) error {
	return kubemark.prepare(ctx, wd, w)
}
