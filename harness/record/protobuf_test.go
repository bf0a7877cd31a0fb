package record

import (
	"bytes"
	"testing"

	"gotest.tools/v3/assert"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// TestProtobufBodies checks that the recorder reads from protobuf bodies,
// as a controller-runtime client sends them for built-in kinds, what it
// reads from JSON: an object's resourceVersion and uid, a Status's reason
// and message, and DeleteOptions' preconditions.
func TestProtobufBodies(t *testing.T) {
	encode := func(obj runtime.Object) []byte {
		var b bytes.Buffer
		assert.NilError(t, protoCodec.Encode(obj, &b))
		return b.Bytes()
	}
	dep := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", ResourceVersion: "42", UID: "u-1"},
	}
	status := &metav1.Status{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status:   metav1.StatusFailure, Reason: metav1.StatusReasonConflict, Code: 409,
		Message: "the object has been modified",
	}
	del := &metav1.DeleteOptions{
		TypeMeta:      metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"},
		Preconditions: &metav1.Preconditions{ResourceVersion: ptr.To("7"), UID: ptr.To(types.UID("u-2"))},
	}

	got, ok := decodeProtobuf(encode(dep))
	assert.Assert(t, ok)
	assert.Equal(t, got.kind, "Deployment")
	assert.Equal(t, got.rv, "42")
	assert.Equal(t, got.uid, "u-1")

	got, ok = decodeProtobuf(encode(status))
	assert.Assert(t, ok)
	assert.Equal(t, got.kind, "Status")
	assert.Equal(t, got.reason, "Conflict")
	assert.Equal(t, got.message, "the object has been modified")

	tests := []struct {
		name    string
		body    []byte
		rv, uid string
	}{
		{"object", encode(dep), "42", ""},
		{"delete preconditions", encode(del), "7", "u-2"},
		{"not protobuf", []byte(`{"metadata":{"resourceVersion":"1"}}`), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rv, uid := sentVersionProtobuf(tc.body)
			assert.Equal(t, rv, tc.rv)
			assert.Equal(t, uid, tc.uid)
		})
	}
	var ok2 bool
	_, ok2 = decodeProtobuf([]byte("not protobuf"))
	ok = ok2
	assert.Assert(t, !ok)

	for ct, want := range map[string]bool{
		"application/vnd.kubernetes.protobuf":                  true,
		"application/vnd.kubernetes.protobuf; charset=unknown": true,
		"application/json":                                     false,
		"":                                                     false,
	} {
		assert.Equal(t, isProtobuf(ct), want, ct)
	}
}
