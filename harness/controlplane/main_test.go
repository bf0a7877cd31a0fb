package controlplane

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// The control plane this package's tests share starts on first use, so
// that a run of the pure-logic tests starts none.
var (
	cpOnce sync.Once
	cp     *ControlPlane
	cpErr  error
)

// controlPlane returns the shared control plane, starting it the first
// time; a failed start fails tb.
func controlPlane(tb testing.TB) *ControlPlane {
	tb.Helper()
	cpOnce.Do(func() { cp, cpErr = Start(context.Background()) })
	if cpErr != nil {
		tb.Fatalf("start the shared control plane: %v", cpErr)
	}
	return cp
}

func TestMain(m *testing.M) {
	// envtest logs through controller-runtime's logger; unset, it warns
	// on stderr after 30 s.
	ctrllog.SetLogger(logr.Discard())
	code := m.Run()
	if cp != nil {
		if err := cp.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "controlplane: stop control plane: %v\n", err)
		}
	}
	os.Exit(code)
}
