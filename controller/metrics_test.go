package controller

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// TestObserve checks that conflicts, and only conflicts, are counted by
// resource and operation, and that every error comes back as it went in.
func TestObserve(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	conflict := apierrors.NewConflict(gr, "web", errors.New("changed"))
	notFound := apierrors.NewNotFound(gr, "web")
	m := NewMetrics()
	r := New(nil, Options{Metrics: m})
	ctx := klog.NewContext(context.Background(), testr.New(t))

	tests := []struct {
		err       error
		resource  string
		operation string
	}{
		{nil, ResourceDeployments, OpUpdate},
		{conflict, ResourceDeployments, OpUpdate},
		{conflict, ResourceDeployments, OpUpdate},
		{notFound, ResourceDeployments, OpUpdate},
		{conflict, ResourceWebApps, OpUpdateStatus},
		{apierrors.NewAlreadyExists(gr, "web"), ResourceWebApps, OpAddFinalizer},
	}
	for _, tc := range tests {
		assert.Equal(t, r.observe(ctx, tc.err, tc.resource, tc.operation, "7"), tc.err)
	}
	got := map[string]int{}
	for _, l := range conflictLabels {
		got[l[0]+" "+l[1]] = m.Conflicts(l[0], l[1])
	}
	want := map[string]int{
		"webapps add-finalizer":    0,
		"webapps remove-finalizer": 0,
		"webapps update-status":    1,
		"deployments update":       2,
	}
	assert.DeepEqual(t, got, want)
}

// TestMetricsHandler checks the exposition an operator scrapes: every
// series exists before its first conflict, and no label names an object.
func TestMetricsHandler(t *testing.T) {
	m := NewMetrics()
	m.conflicts.WithLabelValues(ResourceDeployments, OpUpdate).Inc()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, err := io.ReadAll(rec.Body)
	assert.NilError(t, err)
	var got []string
	for line := range strings.SplitSeq(string(body), "\n") {
		if strings.HasPrefix(line, "racekit_controller_conflicts_total{") {
			got = append(got, line)
		}
	}
	want := []string{
		`racekit_controller_conflicts_total{operation="add-finalizer",resource="webapps"} 0`,
		`racekit_controller_conflicts_total{operation="remove-finalizer",resource="webapps"} 0`,
		`racekit_controller_conflicts_total{operation="update",resource="deployments"} 1`,
		`racekit_controller_conflicts_total{operation="update-status",resource="webapps"} 0`,
	}
	assert.Assert(t, cmp.Equal(got, want), "(-got +want):\n%s", cmp.Diff(got, want))
	assert.Assert(t, strings.Contains(string(body), "go_goroutines"), "the Go collector is missing")
}

// TestQueueMetrics checks that a queue made as Run makes its own shows
// in the exposition under client-go's names, labelled by QueueName: an
// item added and taken but not done is a depth of 0 with one Get and no
// Done (what tells racekit's idle, or an operator, that a key is being
// worked on), and Done counts the work.
func TestQueueMetrics(t *testing.T) {
	m := NewMetrics()
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: QueueName, MetricsProvider: m.queue})
	defer q.ShutDown()
	series := func() map[string]string {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		out := map[string]string{}
		for line := range strings.SplitSeq(rec.Body.String(), "\n") {
			for _, name := range []string{"workqueue_depth", "workqueue_adds_total", "workqueue_queue_duration_seconds_count", "workqueue_work_duration_seconds_count"} {
				if rest, ok := strings.CutPrefix(line, name+`{name="`+QueueName+`"} `); ok {
					out[name] = rest
				}
			}
		}
		return out
	}
	q.Add("a")
	assert.DeepEqual(t, series(), map[string]string{"workqueue_depth": "1", "workqueue_adds_total": "1", "workqueue_queue_duration_seconds_count": "0", "workqueue_work_duration_seconds_count": "0"})
	item, _ := q.Get()
	assert.DeepEqual(t, series(), map[string]string{"workqueue_depth": "0", "workqueue_adds_total": "1", "workqueue_queue_duration_seconds_count": "1", "workqueue_work_duration_seconds_count": "0"})
	q.Done(item)
	assert.DeepEqual(t, series(), map[string]string{"workqueue_depth": "0", "workqueue_adds_total": "1", "workqueue_queue_duration_seconds_count": "1", "workqueue_work_duration_seconds_count": "1"})
}

// TestServeMetrics checks the endpoint that --metrics-addr opens, and that
// stop closes it.
func TestServeMetrics(t *testing.T) {
	ctx := klog.NewContext(context.Background(), testr.New(t))
	addr, stop, err := serveMetrics(ctx, "127.0.0.1:0", NewMetrics())
	assert.NilError(t, err)
	url := "http://" + addr.String() + "/metrics"
	resp, err := http.Get(url)
	assert.NilError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, http.StatusOK)
	assert.Assert(t, strings.Contains(string(body), "racekit_controller_conflicts_total"), "%s", body)
	stop()
	_, err = http.Get(url)
	assert.Assert(t, err != nil, "the endpoint must be closed after stop")

	_, _, err = serveMetrics(ctx, "127.0.0.1:99999", NewMetrics())
	assert.ErrorContains(t, err, "serve metrics: ")
}
