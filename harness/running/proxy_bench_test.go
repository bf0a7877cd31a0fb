package running

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/racekit/racekit/harness/language"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// BenchmarkProxyGET measures what the racing proxy adds to a GET against
// the real API server, side by side: an in-process actor's client (hooks,
// recorder, its client certificate) against a client of the same actor
// through the proxy (its kubeconfig: HTTPS to the proxy, then the same
// hooks, recorder and certificate). It reports the median of each and
// their difference, the proxy's overhead; docs/performance.md has the
// figures.
func BenchmarkProxyGET(b *testing.B) {
	sc, err := language.NewScenario(context.Background(), controlPlane(b), "bench-proxy", b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer sc.Close()
	a, err := sc.Actor("alice")
	if err != nil {
		b.Fatal(err)
	}
	kubeconfig := filepath.Join(b.TempDir(), "alice")
	if err := WriteKubeconfig(sc, "alice", kubeconfig); err != nil {
		b.Fatal(err)
	}
	proxied, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		b.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"k": "v"}}
	direct := clientset(b, a.Config)
	if _, err := direct.CoreV1().ConfigMaps(sc.Namespace).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	// Each iteration sends one GET each way, in turn, so that a change in
	// the machine's load between the two halves does not show as the
	// proxy's cost.
	proxy := clientset(b, proxied)
	get := func(kube *kubernetes.Clientset) time.Duration {
		start := time.Now()
		if _, err := kube.CoreV1().ConfigMaps(sc.Namespace).Get(context.Background(), "c", metav1.GetOptions{}); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var viaDirect, viaProxy []time.Duration
	for b.Loop() {
		viaDirect = append(viaDirect, get(direct))
		viaProxy = append(viaProxy, get(proxy))
	}
	b.ReportMetric(micros(median(viaDirect)), "direct-µs/GET")
	b.ReportMetric(micros(median(viaProxy)), "proxy-µs/GET")
	b.ReportMetric(micros(median(viaProxy)-median(viaDirect)), "overhead-µs/GET")
}

// median returns the middle of ds, which it sorts.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func clientset(b *testing.B, cfg *rest.Config) *kubernetes.Clientset {
	b.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side throttling
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return kube
}
