package controller

import (
	"context"
	"errors"
	"github.com/go-logr/logr/testr"
	"io"
	"k8s.io/klog/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
