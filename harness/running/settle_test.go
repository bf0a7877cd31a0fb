package running

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestGoroutineReading: the goroutines of a life are those with its label,
// and it is idle only when every one of them is parked, and none waits for
// a cache to sync.
func TestGoroutineReading(t *testing.T) {
	for _, tc := range []struct {
		name string
		// run starts the life's goroutines; stop ends them.
		run  func(ctx context.Context, stop <-chan struct{}, started *sync.WaitGroup)
		idle bool
		why  string
	}{
		{"parked on a channel", func(ctx context.Context, stop <-chan struct{}, started *sync.WaitGroup) {
			started.Add(1)
			go func() { started.Done(); <-stop }()
		}, true, ""},
		{"parked on a lock", func(ctx context.Context, stop <-chan struct{}, started *sync.WaitGroup) {
			var mu sync.Mutex
			mu.Lock()
			started.Add(1)
			go func() { started.Done(); mu.Lock() }()
			go func() { <-stop; mu.Unlock() }()
		}, true, ""},
		{"running", func(ctx context.Context, stop <-chan struct{}, started *sync.WaitGroup) {
			started.Add(1)
			go func() {
				started.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
				}
			}()
		}, false, "running or runnable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			label := "test/" + strings.ReplaceAll(tc.name, " ", "-")
			stop := make(chan struct{})
			defer close(stop)
			var started sync.WaitGroup
			runLabelled(context.Background(), label, func(ctx context.Context) { tc.run(ctx, stop, &started) })
			started.Wait()
			// A goroutine that has just said it started may still be on
			// its way to where it parks: read until two readings agree,
			// as idle does, or a busy one shows itself.
			var rd reading
			for range 100000 {
				var err error
				rd, err = goroutineReading(label)
				assert.NilError(t, err)
				if rd.idle == tc.idle {
					break
				}
				runtime.Gosched()
			}
			assert.Equal(t, rd.idle, tc.idle, rd.why)
			assert.Assert(t, strings.Contains(rd.why, tc.why), rd.why)
		})
	}
}

// TestGoroutineReadingNone: a label no goroutine carries is no idle life:
// its goroutines have not run yet.
func TestGoroutineReadingNone(t *testing.T) {
	rd, err := goroutineReading("no/such/life")
	assert.NilError(t, err)
	assert.Assert(t, !rd.idle)
	assert.Equal(t, rd.why, "none of its goroutines runs yet")
}

// TestLabelledGroups parses a goroutine profile as the runtime writes it
// (debug=1): the groups with the label, their counters and frames.
func TestLabelledGroups(t *testing.T) {
	profile := `goroutine profile: total 4
1 @ 0x442931 0x47cd1d
#	0x4c8770	runtime/pprof.writeRuntimeProfile+0xb0	/usr/local/go/src/runtime/pprof/pprof.go:851

2 @ 0x47d92e 0x4158ee 0x483e41
# labels: {"racekit-life":"ns/w/1"}
#	0x4dc0d8	main.main.func1.1+0x18	/tmp/gp/main.go:13

1 @ 0x47d92e 0x480b25 0x483e41
# labels: {"racekit-life":"ns/w/10"}
#	0x480b24	time.Sleep+0x164	/usr/local/go/src/runtime/time.go:363

1 @ 0x47d92e 0x480b25 0x4dc11d 0x483e41
# labels: {"other":"x", "racekit-life":"ns/w/1"}
#	0x480b24	runtime.chanrecv+0x164	/usr/local/go/src/runtime/chan.go:363
#	0x480b25	k8s.io/client-go/tools/cache.WaitForCacheSync+0x11	/x/shared_informer.go:539
`
	got, err := labelledGroups([]byte(profile), lifeLabel, "ns/w/1")
	assert.NilError(t, err)
	want := []group{
		{count: 2, pcs: []string{"0x47d92e", "0x4158ee", "0x483e41"}, where: "main.main.func1.1", frames: []string{"main.main.func1.1"}},
		{count: 1, pcs: []string{"0x47d92e", "0x480b25", "0x4dc11d", "0x483e41"}, where: "k8s.io/client-go/tools/cache.WaitForCacheSync",
			frames: []string{"runtime.chanrecv", "k8s.io/client-go/tools/cache.WaitForCacheSync"}},
	}
	assert.DeepEqual(t, got, want, cmp.AllowUnexported(group{}))
	_, err = labelledGroups([]byte("x @ 0x1\n"), lifeLabel, "a")
	assert.ErrorContains(t, err, "bad line")
}

// TestJudgeMetrics reads workqueues as client-go's and controller-runtime's
// metrics show them: busy while an item is queued, taken and not done, or a
// reconcile runs; a queue that waits for a delay is idle.
func TestJudgeMetrics(t *testing.T) {
	const head = `# TYPE workqueue_depth gauge
# TYPE workqueue_queue_duration_seconds histogram
# TYPE workqueue_work_duration_seconds histogram
# TYPE controller_runtime_active_workers gauge
# TYPE workqueue_retries_total counter
# TYPE controller_runtime_reconcile_total counter
`
	for _, tc := range []struct {
		name, text string
		idle       bool
		why        string
		backoffs   float64
	}{
		{"empty and done", `workqueue_depth{name="cms",priority=""} 0
workqueue_queue_duration_seconds_count{name="cms"} 3
workqueue_queue_duration_seconds_sum{name="cms"} 0.1
workqueue_work_duration_seconds_count{name="cms"} 3
workqueue_work_duration_seconds_sum{name="cms"} 0.1
controller_runtime_active_workers{controller="cms"} 0
workqueue_retries_total{name="cms"} 7
`, true, "", 7},
		// The priority queue counts a RequeueAfter among its retries:
		// where the controller's reconcile results are there, only an
		// error and a requeue at once begin a back-off.
		{"a controller-runtime poller", `workqueue_depth{name="cms",priority=""} 0
workqueue_retries_total{name="cms"} 40
controller_runtime_reconcile_total{controller="cms",result="success"} 1
controller_runtime_reconcile_total{controller="cms",result="requeue_after"} 40
controller_runtime_reconcile_total{controller="cms",result="error"} 2
controller_runtime_reconcile_total{controller="cms",result="requeue"} 1
`, true, "", 3},
		{"a controller-runtime poller that never failed", `workqueue_depth{name="cms",priority=""} 0
workqueue_retries_total{name="cms"} 40
controller_runtime_reconcile_total{controller="cms",result="requeue_after"} 40
controller_runtime_reconcile_total{controller="cms",result="error"} 0
`, true, "", 0},
		{"another controller's results", `workqueue_depth{name="cms",priority=""} 0
workqueue_retries_total{name="cms"} 40
controller_runtime_reconcile_total{controller="other",result="error"} 2
`, true, "", 40},
		{"queued", `workqueue_depth{name="cms",priority=""} 1
`, false, "workqueue cms holds 1", 0},
		{"queued at a priority", `workqueue_depth{name="cms",priority="10"} 1
workqueue_depth{name="cms",priority=""} 0
`, false, "workqueue cms holds 1", 0},
		{"taken, not done", `workqueue_depth{name="cms",priority=""} 0
workqueue_queue_duration_seconds_count{name="cms"} 4
workqueue_queue_duration_seconds_sum{name="cms"} 0.1
workqueue_work_duration_seconds_count{name="cms"} 3
workqueue_work_duration_seconds_sum{name="cms"} 0.1
`, false, "workqueue cms has 1 taken and not done", 0},
		{"reconciling", `workqueue_depth{name="cms",priority=""} 0
controller_runtime_active_workers{controller="cms"} 1
`, false, "controller cms has 1 reconciles running", 0},
		{"no queue", `controller_runtime_active_workers{controller="cms"} 0
`, false, "show no workqueue yet", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := expfmt.NewTextParser(model.UTF8Validation)
			fams, err := p.TextToMetricFamilies(strings.NewReader(head + tc.text))
			assert.NilError(t, err)
			rd := judgeMetrics(fams, "http://x/metrics")
			assert.Equal(t, rd.idle, tc.idle, rd.why)
			assert.Assert(t, strings.Contains(rd.why, tc.why), rd.why)
			assert.Equal(t, rd.backoffs, tc.backoffs)
		})
	}
}

// TestMetricsURL reads metrics= as spawn takes it.
func TestMetricsURL(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: ":8080", want: "http://127.0.0.1:8080/metrics"},
		{in: "0.0.0.0:8080", want: "http://127.0.0.1:8080/metrics"},
		{in: "127.0.0.1:9", want: "http://127.0.0.1:9/metrics"},
		{in: "http://127.0.0.1:9", want: "http://127.0.0.1:9/metrics"},
		{in: "http://127.0.0.1:9/m", want: "http://127.0.0.1:9/m"},
		{in: "https://127.0.0.1:9", err: "plain HTTP"},
		{in: "8080", err: "bad metrics=8080"},
	} {
		got, err := metricsURL(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err)
			continue
		}
		assert.NilError(t, err)
		assert.Equal(t, got, tc.want)
	}
}

// TestRepeats: a poller is settled by a reading that finds it idle when,
// since an earlier reading (the anchor, idle or not), a reconcile taken
// after it ran to its end and nothing but answered reads came; each
// condition left out, it is not.
func TestRepeats(t *testing.T) {
	idle := &reading{counted: true, idle: true, gets: 10, dones: 10, backoffs: 2}
	// between polls: two reconciles since the anchor, both done.
	between := reading{counted: true, idle: true, gets: 12, dones: 12, backoffs: 2}
	with := func(f func(*reading)) reading {
		r := between
		f(&r)
		return r
	}
	reconciling := with(func(r *reading) { r.idle, r.dones = false, 11 })
	for _, tc := range []struct {
		name   string
		anchor *reading
		rd     reading
		since  wireChange
		want   bool
	}{
		{"a poller between polls", idle, between, wireReads, true},
		{"a cached poller: nothing on the wire", idle, between, wireQuiet, true},
		{"a write since", idle, between, wireWrites, false},
		{"no reconcile taken since", idle, with(func(r *reading) { r.gets, r.dones = 10, 10 }), wireReads, false},
		{"something queued", idle, with(func(r *reading) { r.idle = false }), wireReads, false},
		{"a back-off began", idle, with(func(r *reading) { r.backoffs = 3 }), wireReads, false},
		// A reading that catches a reconcile running does not settle:
		// it may be another item's, owing a write (TestJudgeModel).
		{"reconciling at rd", idle, reconciling, wireReads, false},
		// Under load a reading may catch the poller reconciling: an
		// anchor that did is an anchor still, once the reconcile it caught
		// and a whole one after it have ended.
		{"reconciling at the anchor", &reading{counted: true, gets: 10, dones: 9, backoffs: 2}, between, wireReads, true},
		{"reconciling at the anchor, only that one done since", &reading{counted: true, gets: 12, dones: 11, backoffs: 2}, between, wireReads, false},
		{"no anchor", nil, between, wireReads, false},
		{"goroutines, not a workqueue", &reading{idle: true}, reading{idle: true}, wireReads, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, repeats(tc.anchor, tc.rd, tc.since), tc.want)
		})
	}
}

// TestParseMetrics reads a real endpoint's answer, Go's runtime and
// process metrics around a workqueue's, as the whole text format parser
// does for the families idle judges, and reads every answer cut off short
// of a line's end as an error, never as a reading (a process killed in
// the middle of its answer).
func TestParseMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	depth := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_depth"}, []string{"name", "priority"})
	queued := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_queue_duration_seconds"}, []string{"name"})
	worked := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_work_duration_seconds"}, []string{"name"})
	active := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "controller_runtime_active_workers"}, []string{"controller"})
	results := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "controller_runtime_reconcile_total"}, []string{"controller", "result"})
	other := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rest_client_requests_total"}, []string{"code", "method"})
	reg.MustRegister(depth, queued, worked, active, results, other)
	depth.WithLabelValues("cms", "").Set(0)
	queued.WithLabelValues("cms").Observe(0.1)
	queued.WithLabelValues("cms").Observe(0.2)
	worked.WithLabelValues("cms").Observe(0.1)
	active.WithLabelValues("cms").Set(0)
	results.WithLabelValues("cms", "error").Add(2)
	other.WithLabelValues("200", "GET").Add(9)
	fams, err := reg.Gather()
	assert.NilError(t, err)
	var buf strings.Builder
	for _, f := range fams {
		_, err := expfmt.MetricFamilyToText(&buf, f)
		assert.NilError(t, err)
	}
	text := buf.String()

	p := expfmt.NewTextParser(model.UTF8Validation)
	whole, err := p.TextToMetricFamilies(strings.NewReader(text))
	assert.NilError(t, err)
	kept, err := parseMetrics(strings.NewReader(text))
	assert.NilError(t, err)
	want, got := judgeMetrics(whole, "u"), judgeMetrics(kept, "u")
	assert.DeepEqual(t, got, want, cmp.AllowUnexported(reading{}))
	assert.Assert(t, !got.idle && strings.Contains(got.why, "1 taken and not done"), got.why)
	assert.Assert(t, len(kept) < len(whole), "nothing was skipped: %d families of %d", len(kept), len(whole))

	// Every answer cut off short of a line's end is an error.
	for n := 0; n < len(text); n++ {
		_, err := parseMetrics(strings.NewReader(text[:n]))
		if n > 0 && text[n-1] != '\n' && err == nil {
			t.Fatalf("the answer cut off after %d bytes (%q) was read", n, text[max(0, n-40):n])
		}
	}
}

// TestAgreed checks the first rule of judge: two idle readings in a row
// agree across reads between them only when the signal counts the work (a
// workqueue's); to goroutines, which look parked while they wait for an
// answer, a read between is a change, or a loop that never stops reading
// would settle (idle_never.txtar).
func TestAgreed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		counted bool
		since   wireChange
		want    verdict
	}{
		{"workqueue, nothing between", true, wireQuiet, agreed},
		{"workqueue, reads between", true, wireReads, agreed},
		{"workqueue, a write between", true, wireWrites, unsettled},
		{"goroutines, nothing between", false, wireQuiet, agreed},
		{"goroutines, reads between", false, wireReads, unsettled},
		{"goroutines, a write between", false, wireWrites, unsettled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Readings with no reconcile since the first: the second rule
			// (repeats) cannot settle them.
			rd := reading{idle: true, counted: tc.counted, seen: "s"}
			var j readings
			wire := func(int) wireChange { return tc.since }
			assert.Equal(t, j.judge(rd, 1, wire), unsettled, "a first reading")
			assert.Equal(t, j.judge(rd, 2, wire), tc.want)
		})
	}
}
