package controlplane

import (
	"context"
	"testing"
	"time"
)

// BenchmarkControlPlaneStart measures starting kube-apiserver and etcd,
// installing CRDs and warming them up: what every test process pays once.
// It runs beside the control plane the package's tests share, when they
// started it. Three ways are measured side by side, in one run, so that the
// machine's load weighs on each alike:
//
//   - none: no CRD, the start a process pays before any.
//   - with-crds: a user's CRDs given to the start (WithCRDs), here the
//     reference controller's WebApp and the examples' Memcached, read from
//     their files as a user's test reads its own.
//   - install-after: the same CRDs installed once the control plane is up
//     (InstallCRDs), as racekit.Run does on its first call; install-s/op
//     is the install's share.
func BenchmarkControlPlaneStart(b *testing.B) {
	// The harness cannot import the controllers' packages (they import
	// it), so it reads their CRD files by path.
	crds, err := ReadCRDs("../controller/config/crd", "../examples/config/crd/bases")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("none", func(b *testing.B) {
		for b.Loop() {
			stopUntimed(b, startTimed(b))
		}
	})
	b.Run("with-crds", func(b *testing.B) {
		for b.Loop() {
			stopUntimed(b, startTimed(b, WithCRDs(crds)))
		}
	})
	b.Run("install-after", func(b *testing.B) {
		var install time.Duration
		for b.Loop() {
			c := startTimed(b)
			start := time.Now()
			err := c.InstallCRDs(context.Background(), crds)
			install += time.Since(start)
			if err != nil {
				_ = c.Stop()
				b.Fatal(err)
			}
			stopUntimed(b, c)
		}
		b.ReportMetric(install.Seconds()/float64(b.N), "install-s/op")
	})
}

// startTimed starts a control plane with opts, failing b if it cannot.
func startTimed(b *testing.B, opts ...StartOption) *ControlPlane {
	b.Helper()
	c, err := Start(context.Background(), opts...)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// stopUntimed stops c with b's timer stopped: stopping is not part of the
// start.
func stopUntimed(b *testing.B, c *ControlPlane) {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	if err := c.Stop(); err != nil {
		b.Fatal(err)
	}
}
