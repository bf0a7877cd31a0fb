package harness

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
)

// cp is the control plane the harness's own tests share.
var cp *ControlPlane

func TestMain(m *testing.M) {
	flag.Parse()
	var opts []StartOption
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		// The fuzzing coordinator stops its workers with SIGINT and
		// expects them to return from m.Run, not to exit on their own.
		opts = append(opts, WithoutSignalHandler())
	}
	var err error
	cp, err = StartControlPlane(context.Background(), opts...)
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
