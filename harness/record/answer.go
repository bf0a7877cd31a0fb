package record

import (
	"encoding/json"
	"mime"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	"sigs.k8s.io/yaml"
)

// The API server answers in the media type the client asked for: JSON,
// YAML, Kubernetes' protobuf (built-in kinds), or CBOR when its
// CBORServingAndStorage feature gate is on (alpha and off by default in
// kube-apiserver 1.37). The recorder reads every one of them the same
// way, into an answer; a failed call whose body it cannot read has an
// unknown reason, which it says, and never takes from the HTTP status text.

// answer is what the recorder reads of a response body: a Status, one
// object, or a list of objects.
type answer struct {
	kind string
	// status is set for a Status, whose reason and message these are.
	status          bool
	reason, message string
	// name, namespace, rv and uid are the object's (a list's rv is its
	// own); deleting says that it is being deleted, held by finalizers.
	name, namespace, rv, uid string
	deleting                 bool
	// list is set for a list (or a Table), whose items these are.
	list  bool
	items []listItem
}

// listItem is one object of a list answer.
type listItem struct {
	namespace, name, rv string
	deleting            bool
}

// mediaType returns a Content-Type header's media type, lower-case, or ""
// when it names none.
func mediaType(contentType string) string {
	t, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	return t
}

// decodeAnswer reads body, sent with the Content-Type contentType. ok is
// false for a body it cannot read: a media type it does not know, or a
// body that is not what its type says.
func decodeAnswer(contentType string, body []byte) (a answer, ok bool) {
	switch t := mediaType(contentType); {
	case t == protobufType:
		return decodeProtobuf(body)
	case t == "application/yaml":
		data, err := yaml.YAMLToJSON(body)
		if err != nil {
			return a, false
		}
		return decodeJSON(data)
	case t == "application/cbor":
		var v any
		if err := direct.Unmarshal(body, &v); err != nil {
			return a, false
		}
		data, err := json.Marshal(v)
		if err != nil {
			return a, false
		}
		return decodeJSON(data)
	case t == "application/json" || strings.HasSuffix(t, "+json") || t == "":
		return decodeJSON(body)
	}
	return a, false
}

// jsonMeta is the part of an object's metadata the recorder reads.
type jsonMeta struct {
	Name              string   `json:"name"`
	Namespace         string   `json:"namespace"`
	ResourceVersion   string   `json:"resourceVersion"`
	UID               string   `json:"uid"`
	DeletionTimestamp *string  `json:"deletionTimestamp"`
	Finalizers        []string `json:"finalizers"`
}

func (m jsonMeta) item() listItem {
	return listItem{namespace: m.Namespace, name: m.Name, rv: m.ResourceVersion, deleting: m.deleting()}
}

func (m jsonMeta) deleting() bool { return m.DeletionTimestamp != nil && len(m.Finalizers) > 0 }

// jsonAnswer is the part of any API response body the recorder reads.
type jsonAnswer struct {
	Kind     string   `json:"kind"`
	Reason   string   `json:"reason"`
	Message  string   `json:"message"`
	Metadata jsonMeta `json:"metadata"`
	Items    []struct {
		Metadata jsonMeta `json:"metadata"`
	} `json:"items"`
	// Rows are a Table's, as kubectl get asks for them.
	Rows []struct {
		Object struct {
			Metadata jsonMeta `json:"metadata"`
		} `json:"object"`
	} `json:"rows"`
}

// decodeJSON reads a JSON body.
func decodeJSON(body []byte) (a answer, ok bool) {
	var j jsonAnswer
	if err := json.Unmarshal(body, &j); err != nil {
		return a, false
	}
	m := j.Metadata
	a = answer{kind: j.Kind, name: m.Name, namespace: m.Namespace, rv: m.ResourceVersion, uid: m.UID, deleting: m.deleting()}
	switch {
	case j.Kind == "Status":
		a.status, a.reason, a.message = true, j.Reason, j.Message
	case j.Kind == "Table":
		a.list = true
		for _, r := range j.Rows {
			if r.Object.Metadata.Name != "" {
				a.items = append(a.items, r.Object.Metadata.item())
			}
		}
	case strings.HasSuffix(j.Kind, "List") || j.Items != nil:
		a.list = true
		for _, it := range j.Items {
			a.items = append(a.items, it.Metadata.item())
		}
	}
	return a, true
}

// shown returns the items of a list answer as what it showed its actor.
func (a answer) shown() []Shown {
	var out []Shown
	for _, it := range a.items {
		out = append(out, Shown{Namespace: it.namespace, Name: it.name, RV: it.rv})
	}
	return out
}

// StatusOf reads a failed call's body, sent as contentType, as the
// recorder does, and returns its Status's reason and message; ok is false
// when the body is no Status racekit can read.
func StatusOf(contentType string, body []byte) (reason, message string, ok bool) {
	a, decoded := decodeAnswer(contentType, body)
	if !decoded || !a.status {
		return "", "", false
	}
	return a.reason, a.message, true
}
