package record

import (
	"bytes"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
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

// protobufMagic starts every object in Kubernetes' protobuf encoding.
var protobufMagic = []byte("k8s\x00")

// protoCodec decodes the built-in kinds, and Status, from protobuf.
var protoCodec = protobuf.NewSerializer(kscheme.Scheme, kscheme.Scheme)

// isProtobuf reports whether a Content-Type header names protobuf.
func isProtobuf(contentType string) bool {
	return mediaType(contentType) == protobufType
}

// decodeProtobuf reads a protobuf body: a Status, an object or a list of
// a kind the built-in scheme knows, or, for any other kind (such as
// PartialObjectMetadata), the metadata every Kubernetes message keeps in
// its field 1. ok is false for a body that is not Kubernetes' protobuf.
func decodeProtobuf(body []byte) (a answer, ok bool) {
	obj, gvk, err := protoCodec.Decode(body, nil, nil)
	if err != nil {
		return decodeProtobufWire(body)
	}
	if gvk != nil {
		a.kind = gvk.Kind
	}
	if st, isStatus := obj.(*metav1.Status); isStatus {
		a.kind, a.status, a.reason, a.message = "Status", true, string(st.Reason), st.Message
		return a, true
	}
	if meta.IsListType(obj) {
		a.list = true
		if l, err := meta.ListAccessor(obj); err == nil {
			a.rv = l.GetResourceVersion()
		}
		items, err := meta.ExtractList(obj)
		if err != nil {
			return a, true
		}
		for _, it := range items {
			if m, err := meta.Accessor(it); err == nil {
				a.items = append(a.items, objectItem(m))
			}
		}
		return a, true
	}
	if m, err := meta.Accessor(obj); err == nil {
		it := objectItem(m)
		a.name, a.namespace, a.rv, a.uid, a.deleting = it.name, it.namespace, it.rv, string(m.GetUID()), it.deleting
	}
	return a, true
}

// objectItem is the listItem of an object's metadata.
func objectItem(m metav1.Object) listItem {
	return listItem{namespace: m.GetNamespace(), name: m.GetName(), rv: m.GetResourceVersion(),
		deleting: m.GetDeletionTimestamp() != nil && len(m.GetFinalizers()) > 0}
}

// decodeProtobufWire reads a protobuf body of a kind the built-in scheme
// does not know from the wire format: a runtime.Unknown whose type names
// the kind, and whose raw message keeps the metadata in field 1 (an
// ObjectMeta, or a list's ListMeta, whose items are field 2), as every
// Kubernetes API message does.
func decodeProtobufWire(body []byte) (a answer, ok bool) {
	data, ok := bytes.CutPrefix(body, protobufMagic)
	if !ok {
		return a, false
	}
	var u runtime.Unknown
	if err := u.Unmarshal(data); err != nil {
		return a, false
	}
	a.kind = u.Kind
	if strings.HasSuffix(u.Kind, "List") {
		a.list = true
		var lm metav1.ListMeta
		if raw, ok := protobufField(u.Raw, 1); ok && lm.Unmarshal(raw) == nil {
			a.rv = lm.ResourceVersion
		}
		for _, raw := range protobufFields(u.Raw, 2) {
			var om metav1.ObjectMeta
			if m, ok := protobufField(raw, 1); ok && om.Unmarshal(m) == nil {
				a.items = append(a.items, objectItem(&om))
			}
		}
		return a, true
	}
	var om metav1.ObjectMeta
	if raw, ok := protobufField(u.Raw, 1); ok && om.Unmarshal(raw) == nil {
		it := objectItem(&om)
		a.name, a.namespace, a.rv, a.uid, a.deleting = it.name, it.namespace, it.rv, string(om.UID), it.deleting
	}
	return a, true
}

// protobufFields returns the bytes of every length-delimited field num of
// the message in data, in order; nil when data is no message.
func protobufFields(data []byte, num protowire.Number) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		n, typ, l := protowire.ConsumeTag(data)
		if l < 0 {
			return nil
		}
		data = data[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(data)
			if l < 0 {
				return nil
			}
			out = append(out, v)
			data = data[l:]
			continue
		}
		if l = protowire.ConsumeFieldValue(n, typ, data); l < 0 {
			return nil
		}
		data = data[l:]
	}
	return out
}

// protobufField returns the bytes of the first length-delimited field num
// of the message in data.
func protobufField(data []byte, num protowire.Number) ([]byte, bool) {
	fs := protobufFields(data, num)
	if len(fs) == 0 {
		return nil, false
	}
	return fs[0], true
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
