package controller

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// The resource label of the conflict counter.
const (
	ResourceWebApps     = "webapps"
	ResourceDeployments = "deployments"
)

// The operation label of the conflict counter: the write that was refused.
const (
	OpAddFinalizer    = "add-finalizer"
	OpRemoveFinalizer = "remove-finalizer"
	OpUpdateStatus    = "update-status"
	OpUpdate          = "update"
)

// conflictLabels lists every label pair the controller can count, so that
// each series exists, at zero, before its first conflict.
var conflictLabels = [][2]string{
	{ResourceWebApps, OpAddFinalizer},
	{ResourceWebApps, OpRemoveFinalizer},
	{ResourceWebApps, OpUpdateStatus},
	{ResourceDeployments, OpUpdate},
}

// Metrics holds the controller's Prometheus metrics in a registry of its
// own, so that two controllers in one process never share a counter.
type Metrics struct {
	registry  *prometheus.Registry
	conflicts *prometheus.CounterVec
	// queue is the workqueue's metrics provider (Run's queue, QueueName).
	queue *queueMetrics
}

// NewMetrics returns the controller's metrics, with the Go and process
// collectors beside them.
func NewMetrics() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "racekit",
			Subsystem: "controller",
			Name:      "conflicts_total",
			Help:      "Writes the API server refused with 409 Conflict because the object changed after the controller read it. Labelled by resource and operation, never by object: the log names the object.",
		}, []string{"resource", "operation"}),
	}
	m.registry.MustRegister(m.conflicts, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.queue = newQueueMetrics(m.registry)
	for _, l := range conflictLabels {
		m.conflicts.WithLabelValues(l[0], l[1])
	}
	return m
}

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// Conflicts returns how many conflicts have been counted for resource and
// operation.
func (m *Metrics) Conflicts(resource, operation string) int {
	var out dto.Metric
	if err := m.conflicts.WithLabelValues(resource, operation).Write(&out); err != nil {
		return 0
	}
	return int(out.GetCounter().GetValue())
}

// observe counts and logs err when it is a conflict, and returns it as it
// is, so that the retry around the write still sees it. sentRV is the
// resourceVersion the refused write carried. The log line names the object,
// through the logger in ctx, so that an operator can find two writers
// fighting over it.
func (r *Reconciler) observe(ctx context.Context, err error, resource, operation, sentRV string) error {
	if !apierrors.IsConflict(err) {
		return err
	}
	if r.metrics != nil {
		r.metrics.conflicts.WithLabelValues(resource, operation).Inc()
	}
	klog.FromContext(ctx).Info("Write conflict: the object changed after it was read; reading it again",
		"resource", resource, "operation", operation, "sentResourceVersion", sentRV)
	return err
}

// QueueName is the name of the controller's workqueue in its metrics
// (workqueue_depth{name="webapp"} and the rest).
const QueueName = "webapp"

// queueMetrics are client-go's workqueue metrics, by queue name, under
// the names client-go's own provider and controller-runtime's give them
// (workqueue_depth, workqueue_adds_total, ...), in m's registry: what
// tells whoever reads /metrics that the controller has nothing left to
// do (its queue empty, every key it took done), and how long keys wait.
type queueMetrics struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, work              *prometheus.HistogramVec
}

// newQueueMetrics makes the workqueue metrics and registers them in reg.
func newQueueMetrics(reg *prometheus.Registry) *queueMetrics {
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: name, Help: help}, []string{"name"})
	}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: name, Help: help}, []string{"name"})
	}
	histogram := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue", Name: name, Help: help,
			Buckets: prometheus.ExponentialBuckets(10e-9, 10, 12)}, []string{"name"})
	}
	q := &queueMetrics{
		depth:      gauge("depth", "Current depth of the workqueue."),
		unfinished: gauge("unfinished_work_seconds", "Seconds of work in progress that no worker has finished; a large value means a stuck worker."),
		longest:    gauge("longest_running_processor_seconds", "Seconds the longest running worker has been at its key."),
		adds:       counter("adds_total", "Keys added to the workqueue."),
		retries:    counter("retries_total", "Keys added back after a failed reconcile, with a back-off."),
		latency:    histogram("queue_duration_seconds", "Seconds a key waits in the workqueue before a worker takes it."),
		work:       histogram("work_duration_seconds", "Seconds a worker takes over one key."),
	}
	reg.MustRegister(q.depth, q.unfinished, q.longest, q.adds, q.retries, q.latency, q.work)
	return q
}

// NewDepthMetric returns the depth gauge of the queue called name (workqueue.MetricsProvider).
func (q *queueMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return q.depth.WithLabelValues(name)
}

// NewAddsMetric returns the adds counter of the queue called name (workqueue.MetricsProvider).
func (q *queueMetrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return q.adds.WithLabelValues(name)
}

// NewLatencyMetric returns the histogram of how long keys wait of the queue called name (workqueue.MetricsProvider).
func (q *queueMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return q.latency.WithLabelValues(name)
}

// NewWorkDurationMetric returns the histogram of how long a worker takes over a key of the queue called name (workqueue.MetricsProvider).
func (q *queueMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return q.work.WithLabelValues(name)
}

// NewUnfinishedWorkSecondsMetric returns the gauge of unfinished work of the queue called name (workqueue.MetricsProvider).
func (q *queueMetrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return q.unfinished.WithLabelValues(name)
}

// NewLongestRunningProcessorSecondsMetric returns the gauge of the longest running worker of the queue called name (workqueue.MetricsProvider).
func (q *queueMetrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return q.longest.WithLabelValues(name)
}

// NewRetriesMetric returns the retries counter of the queue called name (workqueue.MetricsProvider).
func (q *queueMetrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	return q.retries.WithLabelValues(name)
}
