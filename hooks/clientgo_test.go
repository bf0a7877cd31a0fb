package hooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestParseRequestClientGo checks ParseRequest on the requests client-go
// itself sends, caught by a server that answers nothing useful: a watch as
// an informer opens it, a list of one name, a deletecollection, and the
// version discovery asks for.
func TestParseRequestClientGo(t *testing.T) {
	var mu sync.Mutex
	var got []Call
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, ParseRequest("a", r))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
	}))
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	assert.NilError(t, err)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps("ns")
	_, _ = cms.Watch(ctx, metav1.ListOptions{AllowWatchBookmarks: true, ResourceVersion: "5", TimeoutSeconds: new(int64(300))})
	_, _ = cms.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=c", Limit: 500})
	_ = cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=web"})
	_, _ = cms.Get(ctx, "c", metav1.GetOptions{})
	_, _ = cs.Discovery().ServerVersion()
	assert.DeepEqual(t, got, []Call{
		{Actor: "a", Verb: "watch", Resource: "configmaps", Namespace: "ns"},
		{Actor: "a", Verb: "list", Resource: "configmaps", Namespace: "ns", Name: "c"},
		{Actor: "a", Verb: "deletecollection", Resource: "configmaps", Namespace: "ns"},
		{Actor: "a", Verb: "get", Resource: "configmaps", Namespace: "ns", Name: "c"},
		{Actor: "a", Verb: "get", Path: "/version"},
	})
}
