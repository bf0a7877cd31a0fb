package requestforms

import "net/http"

// Form is a value a client sends, with a name that says which client and
// what for, as a failure message shows it.
type Form struct {
	Name, Value string
}

// Resource is a resource by its API group ("" for the core group),
// version and plural name.
type Resource struct {
	Group, Version, Resource string
}

// prefix returns the segments of r's group version: api/v1, or
// apis/GROUP/VERSION.
func (r Resource) prefix() []string {
	if r.Group == "" {
		return []string{"api", r.Version}
	}
	return []string{"apis", r.Group, r.Version}
}

// Methods are the HTTP methods a corpus sends: each one that has a
// Kubernetes verb, and OPTIONS, which has none.
var Methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}

// PathVerbs are what may come between a group version and the rest of a
// path: nothing, or a deprecated verb prefix (watch, proxy).
var PathVerbs = []string{"", "watch", "proxy"}

// Queries are the queries clients send, and malformed ones. Values are
// raw queries, percent-encoded as on the wire.
var Queries = []Form{
	{"no query", ""},
	{"client-go list", "limit=500&resourceVersion=0"},
	{"client-go reflector watch", "allowWatchBookmarks=true&resourceVersion=0&timeoutSeconds=300&watch=true"},
	{"client-go watch-list", "allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true"},
	{"controller-runtime list with a label selector", "labelSelector=app%3Dweb&limit=500"},
	{"the Python client's watch", "watch=True"},
	{"the Python client's watch from a version", "resourceVersion=7&timeoutSeconds=5&watch=True"},
	{"the JavaScript client's watch", "watch=true"},
	{"kubectl get --watch", "watch=1"},
	{"kubectl get NAME --watch", "fieldSelector=metadata.name%3Dc&resourceVersion=7&watch=true"},
	{"kubectl get with a field selector of a name", "fieldSelector=metadata.name%3Dc"},
	{"kubectl list", "limit=500"},
	{"watch false", "watch=false"},
	{"watch 0", "watch=0"},
	{"watch FALSE, then true", "watch=FALSE&watch=true"},
	{"watch with no value", "watch"},
	{"watch empty", "watch="},
	{"a watch with a limit the codec refuses", "limit=x&watch=true"},
	{"a limit the codec refuses", "limit=x"},
	{"a field selector of an invalid name", "fieldSelector=metadata.name%3D.."},
	{"a field selector of a name with a slash", "fieldSelector=metadata.name%3Da%2Fb"},
	{"a field selector of a name and a namespace", "fieldSelector=metadata.name%3Dc%2Cmetadata.namespace%3Dmine"},
	{"a field selector that excludes a name", "fieldSelector=metadata.name%21%3Dc"},
}

// Accept headers clients send: the JSON ones can be read by any test; the
// protobuf ones only by one that decodes protobuf.
var (
	AcceptJSON         = Form{"JSON (client-go, the Python and JavaScript clients)", "application/json"}
	AcceptProtobuf     = Form{"protobuf (client-go for built-in kinds)", "application/vnd.kubernetes.protobuf, */*"}
	AcceptTable        = Form{"a table (kubectl get)", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"}
	AcceptMetadataList = Form{"metadata only, list (controller-runtime's metadata client)", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"}
	AcceptMetadataOnly = Form{"metadata only, one object", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"}
	AcceptMetadataPB   = Form{"metadata only in protobuf, list (controller-runtime)", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"}
	AcceptAny          = Form{"anything (curl)", "*/*"}
	AcceptNone         = Form{"no Accept header", ""}
)

// Accepts are every Accept header above.
var Accepts = []Form{AcceptJSON, AcceptProtobuf, AcceptTable, AcceptMetadataList, AcceptMetadataOnly, AcceptMetadataPB, AcceptAny, AcceptNone}

// NamespaceForm is how a path names a namespace: the segments it puts
// before the resource.
type NamespaceForm struct {
	Name     string
	Segments []string
}

// NamespaceForms returns the ways a path names a namespace, given the
// namespaces a client may name (the first is the one the malformed forms
// start from): every namespace (no segment, as client-go and kubectl send
// it), an empty namespace (namespaces//, as the Python and JavaScript
// clients send a namespace of ""), each namespace, and malformed ones: .
// and .., each percent-encoded, an encoded slash, a space, the first
// namespace in upper case, and two empty segments.
func NamespaceForms(namespaces []string) []NamespaceForm {
	forms := []NamespaceForm{
		{"every namespace", nil},
		{"an empty namespace", []string{"namespaces", ""}},
	}
	for _, ns := range namespaces {
		forms = append(forms, NamespaceForm{"namespace " + ns, []string{"namespaces", ns}})
	}
	forms = append(forms,
		NamespaceForm{"namespace .", []string{"namespaces", "."}},
		NamespaceForm{"namespace ..", []string{"namespaces", ".."}},
		NamespaceForm{"namespace %2E (.)", []string{"namespaces", "%2E"}},
		NamespaceForm{"namespace %2e%2E (..)", []string{"namespaces", "%2e%2E"}},
		NamespaceForm{"namespace %2F (/)", []string{"namespaces", "%2F"}},
		NamespaceForm{"namespace %20 (a space)", []string{"namespaces", "%20"}},
		NamespaceForm{"two empty namespaces", []string{"namespaces", "", ""}},
	)
	if len(namespaces) > 0 {
		forms = append(forms, NamespaceForm{"namespace " + namespaces[0] + " in upper case", []string{"namespaces", upper(namespaces[0])}})
	}
	return forms
}

// upper returns s with its ASCII letters in upper case.
func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
