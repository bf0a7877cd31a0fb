package record

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	serjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	kscheme "k8s.io/client-go/kubernetes/scheme"
)

// The encoders of every media type the API server answers in.
var (
	jsonCodec = serjson.NewSerializerWithOptions(serjson.DefaultMetaFactory, kscheme.Scheme, kscheme.Scheme, serjson.SerializerOptions{})
	yamlCodec = serjson.NewSerializerWithOptions(serjson.DefaultMetaFactory, kscheme.Scheme, kscheme.Scheme, serjson.SerializerOptions{Yaml: true})
	cborCodec = cbor.NewSerializer(kscheme.Scheme, kscheme.Scheme)
)

// TestDecodeAnswer checks that the recorder reads the same from a body in
// each media type the API server sends: a Status's reason and message, an
// object's metadata, a list's items; and that it says so when it cannot.
func TestDecodeAnswer(t *testing.T) {
	dep := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", ResourceVersion: "42", UID: "u-1"},
	}
	gone := dep.DeepCopy()
	gone.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	gone.Finalizers = []string{"f"}
	status := &metav1.Status{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status:   metav1.StatusFailure, Reason: metav1.StatusReasonAlreadyExists, Code: 409,
		Message: `configmaps "c" already exists`,
	}
	list := &corev1.ConfigMapList{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"},
		ListMeta: metav1.ListMeta{ResourceVersion: "99"},
		Items: []corev1.ConfigMap{
			{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", ResourceVersion: "7"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns", ResourceVersion: "8"}},
		},
	}
	objects := []struct {
		name string
		obj  runtime.Object
		want answer
	}{
		{"object", dep, answer{kind: "Deployment", name: "web", namespace: "ns", rv: "42", uid: "u-1"}},
		{"object being deleted", gone, answer{kind: "Deployment", name: "web", namespace: "ns", rv: "42", uid: "u-1", deleting: true}},
		{"Status", status, answer{kind: "Status", status: true, reason: "AlreadyExists", message: `configmaps "c" already exists`}},
		{"list", list, answer{kind: "ConfigMapList", rv: "99", list: true,
			items: []listItem{{namespace: "ns", name: "a", rv: "7"}, {namespace: "ns", name: "b", rv: "8"}}}},
	}
	codecs := []struct {
		contentType string
		codec       runtime.Encoder
	}{
		{"application/json", jsonCodec},
		{"application/yaml", yamlCodec},
		{"application/vnd.kubernetes.protobuf", protoCodec},
		{"application/cbor", cborCodec},
	}
	for _, c := range codecs {
		for _, o := range objects {
			t.Run(c.contentType+" "+o.name, func(t *testing.T) {
				var b bytes.Buffer
				assert.NilError(t, c.codec.Encode(o.obj, &b))
				got, ok := decodeAnswer(c.contentType, b.Bytes())
				assert.Assert(t, ok)
				if diff := cmp.Diff(o.want, got, cmp.AllowUnexported(answer{}, listItem{})); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			})
		}
	}
	for _, tc := range []struct{ contentType, body string }{
		{"text/plain", "404 page not found"},
		{"application/json", "{not json"},
		{"application/yaml", ":\n\t:"},
		{"application/vnd.kubernetes.protobuf", "not protobuf"},
		{"application/cbor", "\xff\xff"},
	} {
		_, ok := decodeAnswer(tc.contentType, []byte(tc.body))
		assert.Assert(t, !ok, "%s %q was decoded", tc.contentType, tc.body)
	}
}

// TestDecodeProtobufUnknownKind checks that a protobuf body of a kind the
// built-in scheme does not know, such as the PartialObjectMetadata a
// metadata-only client asks for, is read from the wire: its metadata, and
// a list's items.
func TestDecodeProtobufUnknownKind(t *testing.T) {
	wrap := func(kind string, raw []byte) []byte {
		u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: kind}, Raw: raw}
		data, err := u.Marshal()
		assert.NilError(t, err)
		return append(append([]byte(nil), protobufMagic...), data...)
	}
	obj := metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", ResourceVersion: "5", UID: "u"}}
	raw, err := obj.Marshal()
	assert.NilError(t, err)
	got, ok := decodeProtobuf(wrap("PartialObjectMetadata", raw))
	assert.Assert(t, ok)
	assert.DeepEqual(t, got, answer{kind: "PartialObjectMetadata", name: "web", namespace: "ns", rv: "5", uid: "u"}, cmp.AllowUnexported(answer{}, listItem{}))

	l := metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: []metav1.PartialObjectMetadata{obj}}
	raw, err = l.Marshal()
	assert.NilError(t, err)
	got, ok = decodeProtobuf(wrap("PartialObjectMetadataList", raw))
	assert.Assert(t, ok)
	assert.DeepEqual(t, got, answer{kind: "PartialObjectMetadataList", rv: "9", list: true, items: []listItem{{namespace: "ns", name: "web", rv: "5"}}},
		cmp.AllowUnexported(answer{}, listItem{}))
}

// TestExchangeFill checks what a trace says of an answer: a success's
// HTTP status text, a Status's reason, the status text of a Status that
// names no reason (which no rule takes for one), and an unknown reason,
// with why, when the body could not be read: never the status text.
func TestExchangeFill(t *testing.T) {
	conflict := answer{kind: "Status", status: true, reason: "Conflict", message: "modified"}
	tests := []struct {
		name        string
		service     string
		code        int
		a           answer
		decoded     bool
		contentType string
		n           int
		want        Exchange
	}{
		{"success", "", 200, answer{rv: "5", uid: "u"}, true, "application/json", 10, Exchange{Code: 200, Reason: "OK", GotRV: "5", GotUID: "u"}},
		{"success not decoded", "", 200, answer{}, false, "application/yaml", 10, Exchange{Code: 200, Reason: "OK"}},
		{"a list", "", 200, answer{list: true, rv: "9", items: []listItem{{namespace: "ns", name: "a", rv: "7"}}}, true, "application/json", 10,
			Exchange{Code: 200, Reason: "OK", GotRV: "9", Shown: []Shown{{Namespace: "ns", Name: "a", RV: "7"}}}},
		{"Status", "", 409, conflict, true, "application/json", 10, Exchange{Code: 409, Reason: "Conflict", Message: "modified"}},
		{"Status without a reason", "", 500, answer{kind: "Status", status: true, message: "boom"}, true, "application/json", 10,
			Exchange{Code: 500, Reason: "InternalServerError", NoReason: true, Message: "boom"}},
		{"not decoded", "", 409, answer{}, false, "application/yaml", 10, Exchange{Code: 409, ReasonUnknown: "body in application/yaml not decoded"}},
		{"no media type", "", 409, answer{}, false, "", 10, Exchange{Code: 409, ReasonUnknown: "body in no media type not decoded"}},
		{"no Status", "", 409, answer{kind: "ConfigMap"}, true, "application/json", 10, Exchange{Code: 409, ReasonUnknown: "the body is no Status"}},
		{"no body", "", 404, answer{}, false, "", 0, Exchange{Code: 404, ReasonUnknown: "no body"}},
		{"a service", "registry", 409, answer{}, true, "application/json", 10, Exchange{Code: 409, Reason: "Conflict", Service: "registry"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := Exchange{Service: tc.service}
			x.fill(tc.code, tc.a, tc.decoded, tc.contentType, tc.n)
			assert.DeepEqual(t, x, tc.want)
		})
	}
}
