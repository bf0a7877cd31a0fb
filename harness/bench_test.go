package harness

import (
	"context"
	"testing"
)

// BenchmarkControlPlaneStart measures starting kube-apiserver and etcd,
// installing the CRDs and warming them up: what every test process pays
// once. It runs beside the control plane the package's tests share.
func BenchmarkControlPlaneStart(b *testing.B) {
	for b.Loop() {
		c, err := StartControlPlane(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := c.Stop(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
