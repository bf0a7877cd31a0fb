package controller_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"testing"

	"github.com/racekit/racekit/controller"
	"github.com/racekit/racekit/harness"
)

// cp is the control plane that the tests of this package share; each test
// works in a namespace of its own.
var cp *harness.ControlPlane

func TestMain(m *testing.M) {
	var err error
	cp, err = harness.StartControlPlane(context.Background(), webAppCRD())
	if err != nil {
		// Fail at once, with the reason: a missing binary says to run
		// make envtest. Never skip silently.
		fmt.Fprintf(os.Stderr, "controller tests: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := cp.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "controller tests: stop control plane: %v\n", err)
	}
	os.Exit(code)
}

// webAppCRD installs the reference controller's CRD as the control plane
// starts.
func webAppCRD() harness.StartOption {
	sub, err := fs.Sub(controller.CRDs, "config/crd")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder
	}
	crds, err := harness.ReadCRDsFS(sub)
	if err != nil {
		panic(err) // a test keeps the embedded CRD valid
	}
	return harness.WithCRDs(crds)
}
