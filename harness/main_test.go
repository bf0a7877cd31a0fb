package harness

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// The control plane the harness's own tests share starts on first use, so
// that a run needing none (a fuzzing coordinator, whose workers do the
// fuzzing, or a run of pure-logic tests) starts none.
var (
	cpOnce sync.Once
	cp     *ControlPlane
	cpErr  error
	cpOpts []StartOption
)

// controlPlane returns the shared control plane, starting it the first
// time; a failed start fails tb.
func controlPlane(tb testing.TB) *ControlPlane {
	tb.Helper()
	if err := startShared(); err != nil {
		tb.Fatalf("start the shared control plane: %v", err)
	}
	return cp
}

func startShared() error {
	cpOnce.Do(func() { cp, cpErr = StartControlPlane(context.Background(), cpOpts...) })
	return cpErr
}

func TestMain(m *testing.M) {
	if runRequestChild() || runNamespacesChild() || runTreeChild() || runChild() {
		os.Exit(0)
	}
	onPath()
	flag.Parse()
	// envtest logs through controller-runtime's logger; unset, it warns on
	// stderr after 30 s, in the middle of the benchmark lines.
	ctrllog.SetLogger(logr.Discard())
	var reap func() error
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" && !fuzzWorker() {
		// A fuzzing coordinator: a worker that crashes leaves its control
		// plane behind, which becomes the coordinator's to end.
		var err error
		if reap, err = AdoptOrphans(); err != nil {
			fmt.Fprintf(os.Stderr, "harness: %v\n", err)
		}
	}
	if fuzzWorker() {
		// The coordinator stops a worker by closing its input, then
		// sends SIGINT a second later and SIGKILL a second after that:
		// too soon for the API server's graceful stop. A worker's
		// control plane holds nothing worth a graceful stop.
		cpOpts = append(cpOpts, WithKillOnStop())
		// A worker starts it before it answers the coordinator, so that
		// a failed start stops the fuzzing run instead of being recorded
		// as a crash of whatever input the worker was given first.
		if err := startShared(); err != nil {
			fmt.Fprintf(os.Stderr, "harness: %v\n", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	if cp != nil {
		if err := cp.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "harness: stop control plane: %v\n", err)
		}
	}
	if reap != nil {
		if err := reap(); err != nil {
			fmt.Fprintf(os.Stderr, "harness: stop crashed workers' control planes: %v\n", err)
		}
	}
	os.Exit(code)
}

func fuzzWorker() bool {
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}
