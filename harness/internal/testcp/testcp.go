// Package testcp gives the tests of a harness package one control plane,
// started on first use and stopped when the tests end, so that a run of
// pure-logic tests starts none.
package testcp

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/racekit/racekit/harness/controlplane"
)

var (
	once sync.Once
	cp   *controlplane.ControlPlane
	err  error
)

// ControlPlane returns the tests' control plane, starting it the first
// time; a failed start fails tb.
func ControlPlane(tb testing.TB) *controlplane.ControlPlane {
	tb.Helper()
	once.Do(func() { cp, err = controlplane.Start(context.Background()) })
	if err != nil {
		tb.Fatalf("start the shared control plane: %v", err)
	}
	return cp
}

// Main runs m's tests and stops the control plane, if one started. Call it
// from TestMain.
func Main(m *testing.M) {
	// envtest logs through controller-runtime's logger; unset, it warns
	// on stderr after 30 s.
	ctrllog.SetLogger(logr.Discard())
	code := m.Run()
	if cp != nil {
		if err := cp.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "stop the tests' control plane: %v\n", err)
		}
	}
	os.Exit(code)
}
