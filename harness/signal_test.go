package harness

import (
	"fmt"
	"os"
	"testing"
)

// TestSignalTarget is not a test of its own: the leak tests in cmd/racekit
// run this package's test binary with RACEKIT_SIGNAL_TARGET=1, wait for
// "ready" (or for etcd to make its data folder), and interrupt it, or kill
// it with SIGKILL, to check that an interrupted or killed go test leaves no
// process or folder behind. It blocks until the signal handler exits the
// process, or the kill ends it.
func TestSignalTarget(t *testing.T) {
	if os.Getenv("RACEKIT_SIGNAL_TARGET") != "1" {
		t.Skip("run by cmd/racekit's leak tests only")
	}
	controlPlane(t)
	fmt.Println("ready")
	select {}
}
