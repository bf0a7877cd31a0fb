package running

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/racekit/racekit/harness/language"
)

// A spawned controller's workqueues, as its metrics endpoint shows them:
// client-go's workqueue metrics, which controller-runtime and
// kube-controller-manager serve too (a queue with a name has them), and
// controller-runtime's active workers. spawn ... metrics=ADDR names the
// endpoint; $METRICS_ADDR on the spawn line is a free port of loopback
// that spawn gives the process for it.

// metricsOption is spawn's KEY=VALUE that names its metrics endpoint.
const metricsOption = "metrics"

// MetricsPlaceholder is what $METRICS_ADDR holds in a scenario: spawn
// replaces it, on its line and in the process's environment, with
// 127.0.0.1:PORT, a port free when spawn chose it, and reads the process's
// metrics there.
const MetricsPlaceholder = "racekit-metrics-addr"

// metricsURL turns the value of metrics= into the URL of the endpoint: a
// URL, HOST:PORT or :PORT (on loopback), with /metrics unless a path is
// given.
func metricsURL(v string) (string, error) {
	bad := language.UsageError("bad metrics=%s: want the address the process serves its metrics on, such as metrics=:8080, metrics=127.0.0.1:8080 or metrics=$METRICS_ADDR (a free port spawn chooses and puts in its place)", v)
	if strings.HasPrefix(v, "http://") {
		if !strings.Contains(strings.TrimPrefix(v, "http://"), "/") {
			v += "/metrics"
		}
		return v, nil
	}
	if strings.HasPrefix(v, "https://") {
		return "", language.UsageError("metrics=%s: racekit reads metrics over plain HTTP on loopback; serve them without TLS in the scenario (controller-runtime: --metrics-secure=false)", v)
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || port == "" {
		return "", bad
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/metrics", nil
}

// freeMetricsAddr returns 127.0.0.1:PORT for a port of loopback that no
// one listens on now. Another process may take it before the spawned one
// binds it; the spawned process then fails to start, and says so.
func freeMetricsAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("a free port for the metrics: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// queueState is what one reading of an endpoint says of one workqueue.
type queueState struct {
	depth, gets, dones, adds, retries float64
}

// metricsReading reads the endpoint at url once: idle when every workqueue
// is empty, every item taken has been done, and no controller-runtime
// worker is active; seen holds every counter, so that two readings that
// agree saw no work in between.
func metricsReading(ctx context.Context, url string) (reading, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return reading{}, err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := metricsClient.Do(req)
	if err != nil {
		return reading{idle: false, why: fmt.Sprintf("its metrics at %s do not answer: %v", url, err)}, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return reading{why: fmt.Sprintf("its metrics at %s answer %s: %s", url, resp.Status, strings.TrimSpace(string(body)))}, nil
	}
	fams, err := parseMetrics(resp.Body)
	if err != nil {
		// As a process killed (crash, at a moment a hook chose) or
		// ending on its own in the middle of its answer cuts it off: not
		// idle, and the next look reads what it did next. Metrics that
		// stay unreadable fail idle when its time runs out, saying so.
		return reading{why: fmt.Sprintf("its metrics at %s could not be read: %v", url, err)}, nil
	}
	return judgeMetrics(fams, url), nil
}

// metricsClient reads metrics endpoints, on loopback: uncompressed, as
// gunzipping every reading cost idle more than the reading itself.
var metricsClient = &http.Client{Transport: &http.Transport{DisableCompression: true, Proxy: nil}}

// judged are the metric families judgeMetrics reads; histograms by their
// _count alone.
var judged = map[string]bool{
	"workqueue_depth":                        true,
	"workqueue_adds_total":                   true,
	"workqueue_retries_total":                true,
	"workqueue_queue_duration_seconds":       true,
	"workqueue_queue_duration_seconds_count": true,
	"workqueue_work_duration_seconds":        true,
	"workqueue_work_duration_seconds_count":  true,
	"controller_runtime_reconcile_total":     true,
	"controller_runtime_active_workers":      true,
}

// parseMetrics parses the families judgeMetrics reads out of r, a metrics
// endpoint's answer in the text format, and skips every other line
// unparsed: an operator serves a few thousand lines (Go's runtime, its
// REST clients' latencies, leader election), and idle reads its endpoint at
// every change on the wire, where parsing all of them took more than half
// of a test process's time. An answer cut off (the process killed in its
// middle) is an error, as it was to the whole parse: its last line has no
// newline, or the read fails.
func parseMetrics(r io.Reader) (map[string]*dto.MetricFamily, error) {
	var kept bytes.Buffer
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: read it whole.
			rest, err2 := br.ReadBytes('\n')
			line, err = append(slices.Clone(line), rest...), err2
		}
		if len(line) > 0 && err == nil && wantedLine(line) {
			kept.Write(line)
		}
		switch {
		case err == io.EOF && len(line) > 0:
			return nil, fmt.Errorf("the answer ends in the middle of a line: %q", line)
		case err == io.EOF:
			parser := expfmt.NewTextParser(model.UTF8Validation)
			return parser.TextToMetricFamilies(&kept)
		case err != nil:
			return nil, err
		}
	}
}

// wantedLine reports whether line, of the text format, belongs to a family
// judgeMetrics reads: a sample of it, or its # HELP or # TYPE.
func wantedLine(line []byte) bool {
	if rest, ok := bytes.CutPrefix(line, []byte("# ")); ok {
		f := bytes.Fields(rest)
		return len(f) >= 2 && (string(f[0]) == "TYPE" || string(f[0]) == "HELP") && judged[string(f[1])]
	}
	end := bytes.IndexAny(line, "{ \t")
	return end > 0 && judged[string(line[:end])]
}

// judgeMetrics reads the workqueues and workers of fams, the families of
// one reading of the endpoint at url.
func judgeMetrics(fams map[string]*dto.MetricFamily, url string) reading {
	queues := map[string]*queueState{}
	queue := func(m *dto.Metric) *queueState {
		name := label(m, "name")
		q := queues[name]
		if q == nil {
			q = &queueState{}
			queues[name] = q
		}
		return q
	}
	for fam, set := range map[string]func(*queueState, float64){
		"workqueue_depth":                  func(q *queueState, v float64) { q.depth += v },
		"workqueue_adds_total":             func(q *queueState, v float64) { q.adds += v },
		"workqueue_retries_total":          func(q *queueState, v float64) { q.retries += v },
		"workqueue_queue_duration_seconds": func(q *queueState, v float64) { q.gets += v },
		"workqueue_work_duration_seconds":  func(q *queueState, v float64) { q.dones += v },
	} {
		f := fams[fam]
		if f == nil {
			continue
		}
		for _, m := range f.GetMetric() {
			set(queue(m), value(m))
		}
	}
	// backoffs[c] counts controller c's reconciles that ended in an error
	// or asked to be requeued at once, each of which waits in a back-off
	// before its next try; a controller is there when it has any
	// reconcile result at all.
	backoffs := map[string]float64{}
	if f := fams["controller_runtime_reconcile_total"]; f != nil {
		for _, m := range f.GetMetric() {
			c := label(m, "controller")
			backoffs[c] += 0
			if r := label(m, "result"); r == "error" || r == "requeue" {
				backoffs[c] += value(m)
			}
		}
	}
	active := map[string]float64{}
	if f := fams["controller_runtime_active_workers"]; f != nil {
		for _, m := range f.GetMetric() {
			active[label(m, "controller")] += value(m)
		}
	}
	r := reading{idle: true, counted: true}
	var seen, busy []string
	names := make([]string, 0, len(queues))
	for n := range queues {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		q := queues[n]
		seen = append(seen, fmt.Sprintf("%s:%g/%g/%g/%g/%g", n, q.depth, q.gets, q.dones, q.adds, q.retries))
		if b, ok := backoffs[n]; ok {
			r.backoffs += b
		} else {
			r.backoffs += q.retries
		}
		r.gets, r.dones, r.adds = r.gets+q.gets, r.dones+q.dones, r.adds+q.adds
		switch {
		case q.depth > 0:
			busy = append(busy, fmt.Sprintf("workqueue %s holds %g", n, q.depth))
		case q.gets > q.dones:
			busy = append(busy, fmt.Sprintf("workqueue %s has %g taken and not done", n, q.gets-q.dones))
		}
	}
	for c, n := range active {
		seen = append(seen, fmt.Sprintf("active:%s:%g", c, n))
		if n > 0 {
			busy = append(busy, fmt.Sprintf("controller %s has %g reconciles running", c, n))
		}
	}
	sort.Strings(seen)
	sort.Strings(busy)
	r.seen = strings.Join(seen, " ")
	switch {
	case len(queues) == 0:
		r.idle, r.noQueue, r.why = false, true, fmt.Sprintf("its metrics at %s show no workqueue yet (a queue needs a name to have metrics)", url)
	case len(busy) > 0:
		r.idle, r.why = false, strings.Join(busy, "; ")
	}
	return r
}

// label returns the value of m's label called name.
func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// value returns m's value: a gauge's or counter's, or a histogram's count.
func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}
