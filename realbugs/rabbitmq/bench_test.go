package rabbitmq_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/realbugs/rabbitmq"
)

// BenchmarkReproductions runs each real-bug scenario end to end, one at a
// time, against the release it shows the bug on, and reports beside the
// time of an iteration the scenario's own wall time: from its first line
// to its end, the operator's process starts included (the control plane
// is up once per process, before the first iteration). docs/real-bugs.md
// puts it beside Sieve's minutes. A scenario that fails fails the
// benchmark.
func BenchmarkReproductions(b *testing.B) {
	for _, dir := range []string{"testdata/bugs", "testdata/gc"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".txtar")
			b.Run(name, func(b *testing.B) { benchScenario(b, f, rabbitmq.V160) })
		}
	}
}

// benchScenario plays file against r once per iteration, from a folder of
// its own (racekit.Play plays a whole folder).
func benchScenario(b *testing.B, file string, r rabbitmq.Release) {
	dir := b.TempDir()
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(file)), data, 0o644); err != nil {
		b.Fatal(err)
	}
	s := setup(b, dir, r)
	var wall time.Duration
	for b.Loop() {
		results, err := racekit.Play(s)
		if err != nil {
			b.Fatal(err)
		}
		for _, res := range results {
			if !res.Passed {
				b.Fatalf("%s failed:\n%s", res.Name, res.Log)
			}
			wall += res.Duration
		}
	}
	b.ReportMetric(wall.Seconds()/float64(b.N), "scenario-s/op")
}

// BenchmarkAuto explores each auto workload of Sieve's rabbitmq tests
// (recreate, scale 1 → 3 → 2, resize) against v1.6.0 once per iteration,
// with no hint, and reports beside the time of an iteration how many
// plans and runs it made (AutoSummary.Runs: the plans, the reference
// runs, the twins and the confirming reruns) and their rates: the
// figures docs/performance.md puts beside Sieve's hours. Its emit form
// shrinks each confirmed finding's regression scenario too, as --emit
// does, and reports the shrinker's runs (AutoSummary.Shrunk): the
// issue's target counts that time in. The findings are not checked here
// (TestAuto, TestAutoUnobserved and TestAutoResize do); an exploration
// that cannot run fails the benchmark. Run it with -benchtime 1x: one
// exploration takes a minute or more.
func BenchmarkAuto(b *testing.B) {
	for _, dir := range []string{"testdata/auto", "testdata/auto-unobserved", "testdata/auto-resize"} {
		for _, shrink := range []bool{false, true} {
			name := filepath.Base(dir)
			if shrink {
				name += "-emit"
			}
			b.Run(name, func(b *testing.B) {
				s := setup(b, dir, rabbitmq.V160)
				s.ExploreShrink = shrink
				plans, runs, shrunk := 0, 0, 0
				start := time.Now()
				for b.Loop() {
					results, err := racekit.Play(s)
					if err != nil {
						b.Fatal(err)
					}
					for _, res := range results {
						rep := res.Explored
						if rep == nil || rep.Auto == nil {
							b.Fatalf("%s explored nothing auto:\n%s", res.Name, res.Log)
						}
						plans += len(rep.Interleavings)
						runs += rep.Auto.Runs
						shrunk += rep.Auto.Shrunk
					}
				}
				sec := time.Since(start).Seconds()
				b.ReportMetric(float64(plans)/float64(b.N), "plans/op")
				b.ReportMetric(float64(runs)/float64(b.N), "runs/op")
				b.ReportMetric(float64(plans)/sec, "plans/s")
				b.ReportMetric(float64(runs+shrunk)/sec, "runs/s")
				if shrink {
					b.ReportMetric(float64(shrunk)/float64(b.N), "shrink-runs/op")
				}
			})
		}
	}
}
