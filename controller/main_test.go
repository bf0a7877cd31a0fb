package controller_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/racekit/racekit/harness"
)

// cp is the control plane that the tests of this package share; each test
// works in a namespace of its own.
var cp *harness.ControlPlane

func TestMain(m *testing.M) {
	var err error
	cp, err = harness.StartControlPlane(context.Background())
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
