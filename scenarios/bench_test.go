package scenarios

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/racekit/racekit/harness"
)

// BenchmarkFlagship runs the flagship scenario end to end and reports, next
// to its time, the harness overhead: the scenario's wall time over the sum
// of its API round trips as recorded on the wire, the floor the server sets.
// It reports the overhead twice: over the actors' round trips (the trace),
// and over every round trip the scenario costs the server, the harness's
// own calls (its namespace, the reads behind assertions) included.
func BenchmarkFlagship(b *testing.B) {
	var wall, trips, own time.Duration
	var ownCalls int
	opts := options(b, "")
	// testscript reads Files only without a Dir.
	opts.Dir, opts.Files = "", []string{"deployment_conflict.txtar"}
	opts.Done = func(sc *harness.Scenario) {
		wall += sc.Ended().Sub(sc.Started())
		trips += sc.Trace().RoundTrips()
		n, d := sc.OwnRoundTrips()
		ownCalls += n
		own += d
	}
	for b.Loop() {
		testscript.RunT(benchT{b}, params(b, opts))
	}
	b.ReportMetric(float64(wall)/float64(trips), "wall/roundtrips")
	b.ReportMetric(float64(wall)/float64(trips+own), "wall/all-roundtrips")
	b.ReportMetric(float64(trips.Microseconds())/float64(b.N), "roundtrip-µs/op")
	b.ReportMetric(float64(ownCalls)/float64(b.N), "own-calls/op")
}

// benchT adapts a *testing.B to testscript.T. It drops the script's log, which
// would repeat for every iteration; a failing script still fails the
// benchmark.
type benchT struct{ *testing.B }

func (t benchT) Log(...any)    {}
func (t benchT) Parallel()     {}
func (t benchT) Verbose() bool { return false }
func (t benchT) Run(name string, f func(testscript.T)) {
	done := make(chan struct{})
	go func() { defer close(done); f(t) }()
	<-done
}

// BenchmarkCatalogue runs the catalogue once per iteration, every scenario
// in parallel as go test does, in two parts: scripted, the scenarios whose
// races are placed by hand (every file but explore_*.txtar: the catalogue
// before explore), and explore, the explorations. Each reports the peak
// resident memory of the test process and of kube-apiserver and etcd so
// far in the process.
func BenchmarkCatalogue(b *testing.B) {
	files, err := filepath.Glob("*.txtar")
	if err != nil {
		b.Fatal(err)
	}
	var scripted, explore []string
	for _, f := range files {
		if strings.HasPrefix(f, "explore_") {
			explore = append(explore, f)
		} else {
			scripted = append(scripted, f)
		}
	}
	b.Run("scripted", func(b *testing.B) { benchCatalogue(b, scripted) })
	b.Run("explore", func(b *testing.B) { benchCatalogue(b, explore) })
}

// benchCatalogue runs files, each on its own, all at once, once per
// iteration.
func benchCatalogue(b *testing.B, files []string) {
	if len(files) == 0 {
		b.Skip("no scenario")
	}
	for b.Loop() {
		var wg sync.WaitGroup
		for _, f := range files {
			wg.Add(1)
			go func() {
				defer wg.Done()
				opts := options(b, "")
				// testscript reads Files only without a Dir.
				opts.Dir, opts.Files = "", []string{f}
				for _, r := range harness.RunFiles(context.Background(), cp, opts) {
					if !r.Passed {
						b.Errorf("%s failed:\n%s", r.Name, r.Log)
					}
				}
			}()
		}
		wg.Wait()
	}
	rss, err := harness.PeakRSS()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(files)), "scenarios")
	for _, k := range []string{"self", "kube-apiserver", "etcd"} {
		b.ReportMetric(float64(rss[k])/(1<<20), "MiB-peak-"+k)
	}
}

// BenchmarkRunningFlagship stages the flagship race three ways and reports
// each scenario's wall time: one reconcile at a time in this process
// (deployment_conflict), the controller's production main started in this
// process (running_flagship), and the same main as a process of its own,
// racekit controller, through the racing proxy (running_proxy_flagship).
// The running forms wait for what must happen (await, idle), so their time
// includes idle's quiet period.
func BenchmarkRunningFlagship(b *testing.B) {
	for _, bc := range []struct{ name, file string }{
		{"reconcile", "deployment_conflict.txtar"},
		{"start", "running_flagship.txtar"},
		{"spawn", "running_proxy_flagship.txtar"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var wall time.Duration
			opts := options(b, "")
			opts.Dir, opts.Files = "", []string{bc.file}
			opts.Done = func(sc *harness.Scenario) { wall += sc.Ended().Sub(sc.Started()) }
			for b.Loop() {
				testscript.RunT(benchT{b}, params(b, opts))
			}
			b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "ms/scenario")
		})
	}
}
