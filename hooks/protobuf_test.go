package hooks

import (
	"bytes"
	"net/http"
	"testing"

	"gotest.tools/v3/assert"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestParseRequestCreateNameProtobuf checks that a create sent in
// Kubernetes' protobuf encoding, as controller-runtime's client sends
// built-in kinds, is named after the object in its body, as a JSON one is.
func TestParseRequestCreateNameProtobuf(t *testing.T) {
	encode := func(meta metav1.ObjectMeta) []byte {
		var b bytes.Buffer
		d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: meta}
		d.Spec.Template.Labels = map[string]string{"name": "not-this-one"}
		assert.NilError(t, protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(d, &b))
		return b.Bytes()
	}
	tests := []struct {
		name, contentType string
		body              []byte
		want              string
	}{
		{"protobuf", "application/vnd.kubernetes.protobuf", encode(metav1.ObjectMeta{Name: "web", Namespace: "ns", Labels: map[string]string{"a": "b"}}), "deployments/web"},
		{"protobuf, generateName", "application/vnd.kubernetes.protobuf", encode(metav1.ObjectMeta{GenerateName: "web-"}), "deployments"},
		{"protobuf, not the magic", "application/vnd.kubernetes.protobuf", []byte("\x0a\x03web"), "deployments"},
		{"protobuf, cut short", "application/vnd.kubernetes.protobuf", encode(metav1.ObjectMeta{Name: "web"})[:12], "deployments"},
		{"protobuf body, JSON type", "application/json", encode(metav1.ObjectMeta{Name: "web"}), "deployments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", "http://x/apis/apps/v1/namespaces/ns/deployments", bytes.NewReader(tc.body))
			assert.NilError(t, err)
			req.Header.Set("Content-Type", tc.contentType)
			assert.Equal(t, ParseRequest("a", req).Object(), tc.want)
		})
	}
}
