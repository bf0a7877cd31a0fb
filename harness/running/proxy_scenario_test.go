package running

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/racekit/racekit/harness/language"

	"gotest.tools/v3/assert"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestProxyRecords checks what a scenario's racing proxy does with a real
// client against the real API server: a call with an actor's kubeconfig is
// recorded as that actor's, with the API server's answer, and a call whose
// token is not an actor's is refused with 401 and recorded as anonymous,
// never reaching the API server.
func TestProxyRecords(t *testing.T) {
	sc, err := language.NewScenario(context.Background(), controlPlane(t), "proxy-records", t.TempDir())
	assert.NilError(t, err)
	defer sc.Close()
	dir := t.TempDir()
	alice := filepath.Join(dir, "alice")
	assert.NilError(t, WriteKubeconfig(sc, "alice", alice))

	kube := clientFor(t, alice, "")
	_, err = kube.CoreV1().ConfigMaps(sc.Namespace).Get(context.Background(), "absent", metav1.GetOptions{})
	assert.Assert(t, apierrors.IsNotFound(err), "want the API server's 404, got %v", err)
	// A create names its object in its body, JSON or protobuf: the
	// proxy must hand the hooks and the recorder a body they can read
	// again.
	for _, c := range []struct{ name, contentType string }{{"json", ""}, {"proto", "application/vnd.kubernetes.protobuf"}} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: c.name}}
		_, err = clientFor(t, alice, c.contentType).CoreV1().ConfigMaps(sc.Namespace).Create(context.Background(), cm, metav1.CreateOptions{})
		assert.NilError(t, err)
	}

	cfg, err := clientcmd.LoadFromFile(alice)
	assert.NilError(t, err)
	for _, u := range cfg.AuthInfos {
		u.Token = "not-a-token-of-any-actor"
	}
	forged := filepath.Join(dir, "forged")
	assert.NilError(t, clientcmd.WriteToFile(*cfg, forged))
	_, err = clientFor(t, forged, "").CoreV1().ConfigMaps(sc.Namespace).Get(context.Background(), "absent", metav1.GetOptions{})
	assert.Assert(t, apierrors.IsUnauthorized(err), "want 401 from the proxy, got %v", err)

	var got []string
	for _, x := range sc.Trace().Exchanges() {
		got = append(got, x.Actor+" "+x.Verb+" "+x.Object()+" "+x.Reason)
	}
	assert.DeepEqual(t, got, []string{
		"alice get configmaps/absent NotFound",
		"alice create configmaps/json Created",
		"alice create configmaps/proto Created",
		"anonymous get configmaps/absent Unauthorized",
	})
}

// clientFor returns a clientset from kubeconfig that sends contentType
// ("" for client-go's default, JSON).
func clientFor(t *testing.T, kubeconfig, contentType string) *kubernetes.Clientset {
	t.Helper()
	_, err := os.Stat(kubeconfig)
	assert.NilError(t, err)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	assert.NilError(t, err)
	cfg.ContentType = contentType
	kube, err := kubernetes.NewForConfig(cfg)
	assert.NilError(t, err)
	return kube
}
