package v1alpha1

import (
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// crdPath is the CRD that controller-gen would generate from this package.
const crdPath = "../../config/crd/bases/cache.example.com_memcacheds.yaml"

// TestCRDMatchesTypes checks that the CRD manifest and the Go types describe
// the same API: the group, version, kind and plural the scheme registers,
// and a spec schema with the fields of MemcachedSpec and their validation.
// Without a cluster, this is what catches a CRD that was not regenerated
// after the types changed.
func TestCRDMatchesTypes(t *testing.T) {
	crd := readCRD(t)

	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	gvks, _, err := scheme.ObjectKinds(&Memcached{})
	if err != nil {
		t.Fatalf("ObjectKinds(Memcached): %v", err)
	}
	if len(gvks) != 1 {
		t.Fatalf("scheme registers Memcached as %v, want one kind", gvks)
	}
	gvk := gvks[0]
	plural, singular := meta.UnsafeGuessKindToResource(gvk)

	for _, c := range []struct{ field, crd, types string }{
		{"spec.group", crd.Spec.Group, gvk.Group},
		{"spec.names.kind", crd.Spec.Names.Kind, gvk.Kind},
		{"spec.names.listKind", crd.Spec.Names.ListKind, reflect.TypeFor[MemcachedList]().Name()},
		{"spec.names.plural", crd.Spec.Names.Plural, plural.Resource},
		{"spec.names.singular", crd.Spec.Names.Singular, singular.Resource},
		{"metadata.name", crd.Name, plural.Resource + "." + gvk.Group},
		{"spec.scope", string(crd.Spec.Scope), string(apiextensionsv1.NamespaceScoped)},
	} {
		if c.crd != c.types {
			t.Errorf("CRD %s = %q, the Go types say %q", c.field, c.crd, c.types)
		}
	}

	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("CRD has %d versions, want 1", len(crd.Spec.Versions))
	}
	version := crd.Spec.Versions[0]
	if version.Name != gvk.Version {
		t.Errorf("CRD version = %q, the Go types say %q", version.Name, gvk.Version)
	}
	if !version.Served || !version.Storage {
		t.Errorf("CRD version %s: served=%t storage=%t, want both true", version.Name, version.Served, version.Storage)
	}
	if version.Subresources == nil || version.Subresources.Status == nil {
		t.Errorf("CRD version %s has no status subresource, but Memcached is marked +kubebuilder:subresource:status", version.Name)
	}
	if version.Schema == nil || version.Schema.OpenAPIV3Schema == nil {
		t.Fatalf("CRD version %s has no openAPIV3Schema", version.Name)
	}

	root := version.Schema.OpenAPIV3Schema
	spec, ok := root.Properties["spec"]
	if !ok {
		t.Fatalf("CRD schema has no spec property")
	}
	if got, want := slices.Sorted(maps.Keys(spec.Properties)), jsonFields(reflect.TypeFor[MemcachedSpec]()); !slices.Equal(got, want) {
		t.Errorf("CRD spec properties = %v, MemcachedSpec has JSON fields %v", got, want)
	}
	if got, want := sortedStrings(spec.Required), []string{"containerPort", "size"}; !slices.Equal(got, want) {
		t.Errorf("CRD spec.required = %v, want %v", got, want)
	}
	for _, c := range []struct {
		field    string
		min, max float64
	}{
		{"size", 1, 5},
		{"containerPort", 1, 65535},
	} {
		p := spec.Properties[c.field]
		if p.Type != "integer" || p.Format != "int32" {
			t.Errorf("CRD spec.%s is %s/%s, want integer/int32", c.field, p.Type, p.Format)
		}
		if p.Minimum == nil || *p.Minimum != c.min || p.Maximum == nil || *p.Maximum != c.max {
			t.Errorf("CRD spec.%s bounds = [%v, %v], want [%v, %v]", c.field, deref(p.Minimum), deref(p.Maximum), c.min, c.max)
		}
	}

	conditions := root.Properties["status"].Properties["conditions"]
	if conditions.XListType == nil || *conditions.XListType != "map" ||
		!slices.Equal(conditions.XListMapKeys, []string{"type"}) {
		t.Errorf("CRD status.conditions is not a list map keyed by type (+listType=map, +listMapKey=type)")
	}
}

func readCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(crdPath)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		t.Fatalf("%s: %v", crdPath, err)
	}
	return crd
}

// jsonFields returns the sorted JSON names of the fields of struct type t.
func jsonFields(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return sortedStrings(names)
}

func sortedStrings(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func deref(f *float64) any {
	if f == nil {
		return "none"
	}
	return *f
}
