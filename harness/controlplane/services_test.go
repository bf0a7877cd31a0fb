package controlplane

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestServiceRange checks the range the API server gives Services their
// cluster IPs from, as the server itself reports it (its default
// ServiceCIDR): wide enough for every scenario of a test process, whose
// Services outlive their namespaces.
func TestServiceRange(t *testing.T) {
	cs, err := kubernetes.NewForConfig(controlPlane(t).Admin())
	assert.NilError(t, err)
	cidr, err := cs.NetworkingV1().ServiceCIDRs().Get(context.Background(), "kubernetes", metav1.GetOptions{})
	assert.NilError(t, err)
	assert.DeepEqual(t, cidr.Spec.CIDRs, []string{serviceRange})
}
