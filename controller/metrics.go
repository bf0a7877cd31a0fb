package controller

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
