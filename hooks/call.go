package hooks

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// Call describes one HTTP request in the terms a scenario uses: who made it,
// which verb, and which object. It is derived from the request alone, so the
// same Call is seen before the request is sent and after its response arrives.
type Call struct {
	// Actor is the name of the client that made the call.
	Actor string
	// Verb is the Kubernetes verb: get, list, watch, create, update, patch,
	// delete or deletecollection. Calls outside the Kubernetes API (the
	// external registry, for example) use the same verbs, derived the same
	// way from the HTTP method and the path.
	Verb string
	// Resource is the plural resource name, such as "deployments".
	Resource string
	// Namespace is empty for cluster-scoped objects.
	Namespace string
	// Name is empty for collections.
	Name string
	// Subresource is the part after the name, such as "status" or "scale".
	Subresource string
}

// Object returns the call's target as resource[/name[/subresource]], the form
// scenarios write it in.
func (c Call) Object() string {
	s := c.Resource
	if c.Name != "" {
		s += "/" + c.Name
	}
	if c.Subresource != "" {
		s += "/" + c.Subresource
	}
	return s
}

// String renders the call as "actor verb object".
func (c Call) String() string {
	return c.Actor + " " + c.Verb + " " + c.Object()
}

// ParseRequest derives the Call for req made by actor. It understands the
// Kubernetes API paths (/api/v1/..., /apis/GROUP/VERSION/...) and, for any
// other path, reads /RESOURCE[/NAME] or /RESOURCE/NAMESPACE/NAME.
func ParseRequest(actor string, req *http.Request) Call {
	c := Call{Actor: actor}
	parts := splitPath(req.URL.Path)
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:] // api, v1
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:] // apis, group, version
	default:
		// Not the Kubernetes API: /RESOURCE[/NAME] or
		// /RESOURCE/NAMESPACE/NAME, as the external registry uses.
		switch len(parts) {
		case 0:
		case 1:
			c.Resource = parts[0]
		case 2:
			c.Resource, c.Name = parts[0], parts[1]
		default:
			c.Resource, c.Namespace, c.Name = parts[0], parts[1], strings.Join(parts[2:], "/")
		}
		c.Verb = verbFor(req, c.Name != "")
		return c
	}
	// namespaces/NAME/status and namespaces/NAME/finalize are subresources of
	// a namespace; any other namespaces/NS/... path is namespaced.
	if len(parts) >= 3 && parts[0] == "namespaces" && !(len(parts) == 3 && (parts[2] == "status" || parts[2] == "finalize")) {
		c.Namespace = parts[1]
		parts = parts[2:]
	}
	if len(parts) > 0 {
		c.Resource = parts[0]
	}
	if len(parts) > 1 {
		c.Name = parts[1]
	}
	if len(parts) > 2 {
		c.Subresource = strings.Join(parts[2:], "/")
	}
	c.Verb = verbFor(req, c.Name != "")
	if c.Verb == "create" && c.Name == "" {
		// A create is sent to the collection; the object's name is in
		// the body. Scenarios name the object all the same.
		c.Name = bodyName(req)
	}
	return c
}

// bodyName returns metadata.name from a copy of req's body, or "" when the
// body cannot be read again or names nothing (generateName). The body is
// JSON, or Kubernetes' protobuf, which clients such as controller-runtime's
// send for built-in kinds.
func bodyName(req *http.Request) string {
	if req.GetBody == nil {
		return ""
	}
	body, err := req.GetBody()
	if err != nil {
		return ""
	}
	defer body.Close()
	if t, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type")); t == "application/vnd.kubernetes.protobuf" {
		data, err := io.ReadAll(io.LimitReader(body, 1<<20))
		if err != nil {
			return ""
		}
		return protobufName(data)
	}
	var obj struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if json.NewDecoder(io.LimitReader(body, 1<<20)).Decode(&obj) != nil {
		return ""
	}
	return obj.Metadata.Name
}

// protobufMagic starts every body in Kubernetes' protobuf encoding.
var protobufMagic = []byte("k8s\x00")

// protobufName returns metadata.name from a body in Kubernetes' protobuf
// encoding, reading the wire format directly: the body is a
// runtime.Unknown whose field 2 holds the object, every built-in object's
// field 1 is its ObjectMeta, and ObjectMeta's field 1 is the name. It
// returns "" for anything else.
func protobufName(data []byte) string {
	data, ok := bytes.CutPrefix(data, protobufMagic)
	if !ok {
		return ""
	}
	for _, field := range []protowire.Number{2, 1, 1} {
		if data, ok = protobufField(data, field); !ok {
			return ""
		}
	}
	return string(data)
}

// protobufField returns the bytes of the first length-delimited field num
// of the message in data.
func protobufField(data []byte, num protowire.Number) ([]byte, bool) {
	for len(data) > 0 {
		n, typ, l := protowire.ConsumeTag(data)
		if l < 0 {
			return nil, false
		}
		data = data[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(data)
			return v, l >= 0
		}
		if l = protowire.ConsumeFieldValue(n, typ, data); l < 0 {
			return nil, false
		}
		data = data[l:]
	}
	return nil, false
}

func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func verbFor(req *http.Request, named bool) string {
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		if req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1" {
			return "watch"
		}
		if named {
			return "get"
		}
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if named {
			return "delete"
		}
		return "deletecollection"
	}
	return strings.ToLower(req.Method)
}

// Verbs lists the verbs a Call can carry, for help and for checking
// scenario input.
var Verbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
