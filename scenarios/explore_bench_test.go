package scenarios

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/racekit/racekit/harness"
)

// BenchmarkExploreFlagship explores explore_flagship.txtar (depth 1: every
// moment of the settle, two interferers) and reports interleavings per
// second over the whole exploration, learning run included; then, side by
// side, it runs the same interleavings as the hand-written scenarios
// --emit would make of them, one after another, and reports their rate.
// The target is 20 interleavings per second on 2 cores.
func BenchmarkExploreFlagship(b *testing.B) {
	opts := options(b, "")
	var runs int
	var explored, oneByOne time.Duration
	var scripts [][]byte
	for b.Loop() {
		start := time.Now()
		rep, err := harness.Explore(context.Background(), cp, opts, "explore_flagship.txtar", harness.ExploreOptions{})
		if err != nil {
			b.Fatal(err)
		}
		explored += time.Since(start)
		runs += len(rep.Interleavings)
		if f := rep.Failed(); len(f) > 0 {
			b.Fatalf("%d interleavings failed: %s", len(f), f[0].Failure)
		}
		scripts = scripts[:0]
		for _, il := range rep.Interleavings {
			scripts = append(scripts, il.Script)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(runs)/explored.Seconds(), "interleavings/s")
	dir := b.TempDir()
	start := time.Now()
	for i, s := range scripts {
		file := filepath.Join(dir, fmt.Sprintf("run%02d.txtar", i))
		if err := os.WriteFile(file, s, 0o644); err != nil {
			b.Fatal(err)
		}
		o := opts
		o.Dir, o.Files = "", []string{file}
		if res := harness.RunFiles(context.Background(), cp, o); len(res) != 1 || !res[0].Passed {
			b.Fatalf("the scenario of run %d failed on its own", i)
		}
	}
	oneByOne = time.Since(start)
	b.ReportMetric(float64(len(scripts))/oneByOne.Seconds(), "one-by-one/s")
}

// BenchmarkExploreGrowth reports how the moments and the wall time of an
// exploration grow with the workload's length (1, 2, 4 and 8 reconciles
// of the flagship's WebApp, the first acting on a spec change, the others
// finding nothing to do) and with depth 2.
func BenchmarkExploreGrowth(b *testing.B) {
	opts := options(b, "")
	dir := b.TempDir()
	const script = `create webapp.yaml
reconcile webapps/web
patch setup webapps/web merge '{"spec":{"replicas":2}}'
explore %s repeat %d reconcile webapps/web
with annotate bob deployments/web team=blue
annotation deployments/web team=blue
confirmed webapps/web 2 2
referee controller

-- webapp.yaml --
apiVersion: demo.racekit.dev/v1alpha1
kind: WebApp
metadata:
  name: web
spec:
  replicas: 1
  image: nginx
`
	for _, tc := range []struct{ n, depth int }{{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2}, {2, 2}} {
		b.Run(fmt.Sprintf("reconciles=%d/depth=%d", tc.n, tc.depth), func(b *testing.B) {
			file := filepath.Join(dir, fmt.Sprintf("growth_%d_%d.txtar", tc.n, tc.depth))
			text := fmt.Sprintf(script, "depth="+fmt.Sprint(tc.depth), tc.n)
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				b.Fatal(err)
			}
			var rep *harness.ExploreReport
			for b.Loop() {
				var err error
				if rep, err = harness.Explore(context.Background(), cp, opts, file, harness.ExploreOptions{}); err != nil {
					b.Fatal(err)
				}
				if f := rep.Failed(); len(f) > 0 {
					b.Fatalf("%d interleavings failed: %s", len(f), strings.SplitN(f[0].Failure, "\n", 2)[0])
				}
			}
			b.ReportMetric(float64(len(rep.Moments)), "moments")
			b.ReportMetric(float64(len(rep.Interleavings)), "interleavings")
		})
	}
}
