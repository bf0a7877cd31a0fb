package harness

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// cp is the control plane the harness's own tests share.
var cp *ControlPlane

func TestMain(m *testing.M) {
	var err error
	cp, err = StartControlPlane(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "harness: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := cp.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "harness: stop control plane: %v\n", err)
	}
	os.Exit(code)
}
