package harness

import (
	"mime"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	kscheme "k8s.io/client-go/kubernetes/scheme"
)

// A controller that runs as a process of its own chooses its own wire
// format, and controller-runtime's client (racekit controller's, say) asks
// for protobuf for the built-in kinds. The recorder reads the metadata the
// trace shows from a protobuf body too; custom resources always travel as
// JSON.

// protobufType is the media type of Kubernetes' protobuf encoding.
const protobufType = "application/vnd.kubernetes.protobuf"

// protoCodec decodes the built-in kinds, and Status, from protobuf.
var protoCodec = protobuf.NewSerializer(kscheme.Scheme, kscheme.Scheme)

// isProtobuf reports whether a Content-Type header names protobuf.
func isProtobuf(contentType string) bool {
	t, _, err := mime.ParseMediaType(contentType)
	return err == nil && t == protobufType
}

// decodeProtobuf decodes a protobuf body into the recorder's view of a
// response: its kind, a Status's reason and message, or the object's
// resourceVersion and uid. ok is false for a body it cannot decode, such
// as a kind the built-in scheme does not know.
func decodeProtobuf(body []byte) (got response, ok bool) {
	obj, gvk, err := protoCodec.Decode(body, nil, nil)
	if err != nil {
		return got, false
	}
	if gvk != nil {
		got.Kind = gvk.Kind
	}
	if st, isStatus := obj.(*metav1.Status); isStatus {
		got.Kind, got.Reason, got.Message = "Status", string(st.Reason), st.Message
		return got, true
	}
	if m, err := meta.Accessor(obj); err == nil {
		got.Metadata.ResourceVersion, got.Metadata.UID = m.GetResourceVersion(), string(m.GetUID())
	}
	return got, true
}

// sentVersionProtobuf is sentVersion for a protobuf request body: the
// object's metadata, or DeleteOptions preconditions.
func sentVersionProtobuf(body []byte) (rv, uid string) {
	obj, _, err := protoCodec.Decode(body, nil, nil)
	if err != nil {
		return "", ""
	}
	return versionOf(obj)
}

// versionOf returns the resourceVersion and uid obj pins.
func versionOf(obj runtime.Object) (rv, uid string) {
	if o, ok := obj.(*metav1.DeleteOptions); ok {
		if p := o.Preconditions; p != nil {
			if p.ResourceVersion != nil {
				rv = *p.ResourceVersion
			}
			if p.UID != nil {
				uid = string(*p.UID)
			}
		}
		return rv, uid
	}
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetResourceVersion(), ""
	}
	return "", ""
}
