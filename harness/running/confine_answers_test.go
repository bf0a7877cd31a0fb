package running

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/racekit/racekit/harness/record"
)

// What TestConfinedPaths reads of an answer, and how it compares answers
// with each other and with the call the recorder noted.

// answer is what the API server answered, as the properties compare it.
type answer struct {
	Code int
	// Shape is watch, list (a List kind), table, object, status, or text
	// (a body that is no JSON object), or empty.
	Shape string
	// Kind is the body's kind: ConfigMapList, Table, Status, ConfigMap.
	Kind string
	// Reason is a Status's reason; Detail, the resource/name its details
	// give, if they name one.
	Reason, Detail string
	// Objects are what the answer shows: a list's items, a table's rows,
	// the object, each watch event's object but bookmarks; sorted.
	Objects []shown
}

// shown is one object an answer shows.
type shown struct{ Kind, Namespace, Name string }

// in returns a with only the objects in namespace, as a read of every
// namespace kept to it answers.
func (a answer) in(namespace string) answer {
	b := a
	b.Objects = nil
	for _, o := range a.Objects {
		if o.Namespace == namespace || o.Namespace == "" {
			b.Objects = append(b.Objects, o)
		}
	}
	return b
}

// diff says how b differs from a, or "" if it does not.
func (a answer) diff(b answer) string {
	if a.Code != b.Code || a.Shape != b.Shape || a.Kind != b.Kind || a.Reason != b.Reason {
		return fmt.Sprintf("want %d %s %s %s, got %d %s %s %s", a.Code, a.Shape, a.Kind, a.Reason, b.Code, b.Shape, b.Kind, b.Reason)
	}
	if !slices.Equal(a.Objects, b.Objects) {
		return fmt.Sprintf("want objects %v, got %v", a.Objects, b.Objects)
	}
	return ""
}

// kindResource maps the kinds of confinedSpace's objects to their
// resources, for the check of a recorded call's resource.
var kindResource = map[string]string{"ConfigMap": "configmaps", "Deployment": "deployments", "Namespace": "namespaces"}

// matches returns "" if x, the call recorded for a request, matches what
// the API server did with it (a), and else what does not.
func (a answer) matches(x *record.Exchange) string {
	if x.Code != a.Code {
		return fmt.Sprintf("the API server answered %d", a.Code)
	}
	if x.Path != "" {
		// No resource: discovery (an APIResourceList), /version, a 404.
		if a.Shape == "watch" || len(a.Objects) > 0 {
			return "the API server sent objects of a resource"
		}
		return ""
	}
	switch {
	case a.Shape == "watch" && x.Verb != "watch":
		return "the API server sent a watch"
	case a.Shape == "list" && x.Verb != "list" && x.Verb != "deletecollection":
		return "the API server sent a " + a.Kind
	case a.Shape == "object" && (x.Verb == "list" || x.Verb == "watch" || x.Verb == "deletecollection"):
		return "the API server sent one " + a.Kind
	case a.Shape == "object" && x.Name != a.Objects[0].Name:
		return "the API server sent " + a.Objects[0].Name
	case strings.HasPrefix(a.Detail, x.Resource+"/") && a.Detail != x.Resource+"/"+x.Name:
		return fmt.Sprintf("the API server's %s names %s", a.Reason, a.Detail)
	}
	if r, ok := kindResource[strings.TrimSuffix(a.Kind, "List")]; ok && a.Shape == "list" && r != x.Resource {
		return "the API server sent a " + a.Kind
	}
	for _, o := range a.Objects {
		if r, ok := kindResource[o.Kind]; ok && r != x.Resource {
			return fmt.Sprintf("the API server sent %s %s", o.Kind, o.Name)
		}
		if o.Namespace != "" && x.Namespace != "" && o.Namespace != x.Namespace {
			return fmt.Sprintf("the API server sent %s of namespace %s", o.Name, o.Namespace)
		}
		if x.Name != "" && (a.Shape == "list" || a.Shape == "watch" || a.Shape == "table") && o.Name != x.Name {
			return fmt.Sprintf("the API server sent %s too", o.Name)
		}
	}
	return ""
}

// bodyValue is the part of a JSON body the answer reads: an object, a list,
// a table, a Status, or a watch event.
type bodyValue struct {
	Kind     string
	Reason   string
	Details  struct{ Name, Kind string }
	Metadata objectMeta
	Items    []struct {
		Kind     string
		Metadata objectMeta
	}
	Rows []struct {
		Object struct {
			Kind     string
			Metadata objectMeta
		}
	}
	Type   string
	Object *bodyValue
}

type objectMeta struct {
	Name, Namespace string
	Annotations     map[string]string
}

// readAnswer reads resp: a watch's events up to the bookmark that ends
// its initial events (or the stream's end), else its one JSON value.
func readAnswer(resp *http.Response) (answer, error) {
	a := answer{Code: resp.StatusCode}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1))
	if err != nil || len(data) == 0 {
		a.Shape = "empty"
		return a, nil
	}
	dec := json.NewDecoder(io.MultiReader(bytes.NewReader(data), resp.Body))
	for {
		var v bodyValue
		if err := dec.Decode(&v); err != nil {
			if errors.Is(err, io.EOF) && a.Shape == "watch" {
				break
			}
			if a.Shape == "" {
				a.Shape = "text"
				return a, nil
			}
			return a, fmt.Errorf("read the answer: %w", err)
		}
		if v.Type != "" && v.Object != nil {
			a.Shape = "watch"
			if v.Type == "BOOKMARK" {
				if v.Object.endsInitialEvents() {
					break
				}
				continue
			}
			a.Objects = append(a.Objects, v.Object.shows()...)
			continue
		}
		a.Kind, a.Reason = v.Kind, v.Reason
		if v.Kind == "Status" && v.Details.Name != "" {
			a.Detail = v.Details.Kind + "/" + v.Details.Name
		}
		a.Objects = v.shows()
		switch {
		case v.Kind == "Status":
			a.Shape = "status"
		case v.Kind == "Table":
			a.Shape = "table"
		case strings.HasSuffix(v.Kind, "List"):
			a.Shape = "list"
		default:
			a.Shape = "object"
		}
		break
	}
	slices.SortFunc(a.Objects, func(x, y shown) int {
		return strings.Compare(x.Kind+"/"+x.Namespace+"/"+x.Name, y.Kind+"/"+y.Namespace+"/"+y.Name)
	})
	return a, nil
}

// endsInitialEvents reports whether v, a bookmark's object, ends a watch's
// initial events: it carries the annotation that says so, itself or, in a
// watch of tables, in its row.
func (v *bodyValue) endsInitialEvents() bool {
	const end = "k8s.io/initial-events-end"
	if v.Metadata.Annotations[end] == "true" {
		return true
	}
	for _, r := range v.Rows {
		if r.Object.Metadata.Annotations[end] == "true" {
			return true
		}
	}
	return false
}

// shows returns the objects v shows: its items, its rows, or itself.
func (v *bodyValue) shows() []shown {
	switch {
	case v.Kind == "Status":
		return nil
	case v.Kind == "Table":
		var out []shown
		for _, r := range v.Rows {
			out = append(out, shown{r.Object.Kind, r.Object.Metadata.Namespace, r.Object.Metadata.Name})
		}
		return out
	case strings.HasSuffix(v.Kind, "List"):
		kind := strings.TrimSuffix(v.Kind, "List")
		var out []shown
		for _, it := range v.Items {
			k := it.Kind
			if k == "" {
				k = kind
			}
			out = append(out, shown{k, it.Metadata.Namespace, it.Metadata.Name})
		}
		return out
	}
	return []shown{{v.Kind, v.Metadata.Namespace, v.Metadata.Name}}
}
