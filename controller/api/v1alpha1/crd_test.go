package v1alpha1_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/racekit/racekit/controller"
	"github.com/racekit/racekit/controller/api/v1alpha1"
)

// crdFile is the manifest the control plane installs, read from the same
// embedded files the harness reads.
const crdFile = "config/crd/demo.racekit.dev_webapps.yaml"

// shape is the part of a schema that Go types decide: the JSON type and
// format of each field, which fields are required, and what objects and
// arrays hold. Validation beyond that (minimum, pattern) lives in the CRD only.
type shape struct {
	Type       string
	Format     string
	Required   []string
	Properties map[string]shape
	Items      *shape
}

// TestCRDMatchesTypes fails when the Go types and the CRD manifest disagree:
// a field in one and not the other, a different JSON type or format, or a
// field required in one and optional in the other.
func TestCRDMatchesTypes(t *testing.T) {
	crd := readCRD(t)
	assert.Equal(t, crd.Spec.Group, v1alpha1.GroupVersion.Group)
	assert.Equal(t, crd.Spec.Names.Plural, v1alpha1.Resource)
	assert.Equal(t, crd.Spec.Names.Kind, v1alpha1.Kind)
	assert.Equal(t, len(crd.Spec.Versions), 1)
	v := crd.Spec.Versions[0]
	assert.Equal(t, v.Name, v1alpha1.GroupVersion.Version)
	assert.Assert(t, v.Subresources != nil && v.Subresources.Status != nil, "the status subresource must be on: the controller writes status through it")

	got := fromSchema(*v.Schema.OpenAPIV3Schema)
	want := fromGo(reflect.TypeFor[v1alpha1.WebApp]())
	assert.Assert(t, cmp.Equal(want, got), "Go types (-) against %s (+):\n%s", crdFile, cmp.Diff(want, got))
}

// TestShapeOfGo checks the reflection walk itself on small types, so that
// TestCRDMatchesTypes cannot pass by seeing nothing.
func TestShapeOfGo(t *testing.T) {
	type inner struct {
		When metav1.Time `json:"when"`
	}
	type sample struct {
		metav1.TypeMeta `json:",inline"`
		Count           int32   `json:"count"`
		Big             int64   `json:"big,omitempty"`
		Name            string  `json:"name,omitempty"`
		List            []inner `json:"list,omitempty"`
		Skipped         string  `json:"-"`
		unexported      string
	}
	_ = sample{}.unexported
	want := shape{Type: "object", Required: []string{"count"}, Properties: map[string]shape{
		"apiVersion": {Type: "string"},
		"kind":       {Type: "string"},
		"count":      {Type: "integer", Format: "int32"},
		"big":        {Type: "integer", Format: "int64"},
		"name":       {Type: "string"},
		"list": {Type: "array", Items: &shape{Type: "object", Required: []string{"when"}, Properties: map[string]shape{
			"when": {Type: "string", Format: "date-time"},
		}}},
	}}
	assert.DeepEqual(t, fromGo(reflect.TypeFor[sample]()), want)
}

func readCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := controller.CRDs.ReadFile(crdFile)
	assert.NilError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	assert.NilError(t, yaml.UnmarshalStrict(data, crd))
	return crd
}

func fromSchema(s apiextensionsv1.JSONSchemaProps) shape {
	out := shape{Type: s.Type, Format: s.Format}
	if len(s.Required) > 0 {
		out.Required = slices.Sorted(slices.Values(s.Required))
	}
	if len(s.Properties) > 0 {
		out.Properties = map[string]shape{}
		for name, p := range s.Properties {
			out.Properties[name] = fromSchema(p)
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		items := fromSchema(*s.Items.Schema)
		out.Items = &items
	}
	return out
}

// fromGo derives the shape that encoding/json gives t.
func fromGo(t reflect.Type) shape {
	switch t {
	case reflect.TypeFor[metav1.Time]():
		return shape{Type: "string", Format: "date-time"}
	case reflect.TypeFor[metav1.ObjectMeta]():
		// The API server validates metadata itself; a CRD only says
		// that it is an object.
		return shape{Type: "object"}
	}
	switch t.Kind() {
	case reflect.String:
		return shape{Type: "string"}
	case reflect.Int32:
		return shape{Type: "integer", Format: "int32"}
	case reflect.Int64:
		return shape{Type: "integer", Format: "int64"}
	case reflect.Bool:
		return shape{Type: "boolean"}
	case reflect.Pointer:
		return fromGo(t.Elem())
	case reflect.Slice:
		items := fromGo(t.Elem())
		return shape{Type: "array", Items: &items}
	case reflect.Struct:
		out := shape{Type: "object", Properties: map[string]shape{}}
		addFields(&out, t)
		slices.Sort(out.Required)
		return out
	}
	return shape{Type: "unsupported Go kind " + t.Kind().String()}
}

// addFields adds the JSON fields of struct t to out, flattening inline
// embedded structs the way encoding/json does.
func addFields(out *shape, t reflect.Type) {
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			addFields(out, f.Type)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out.Properties[name] = fromGo(f.Type)
		optional := slices.Contains(strings.Split(opts, ","), "omitempty") || slices.Contains(strings.Split(opts, ","), "omitzero")
		if !optional {
			out.Required = append(out.Required, name)
		}
	}
}
