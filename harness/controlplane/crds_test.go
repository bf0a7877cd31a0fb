package controlplane

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// crdYAML returns a small namespaced CRD for group example.com, kind Kind
// (plural kinds), with the given spec schema type for spec.size.
func crdYAML(kind, sizeType string) string {
	plural := strings.ToLower(kind) + "s"
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ` + plural + `.example.com
spec:
  group: example.com
  names:
    kind: ` + kind + `
    listKind: ` + kind + `List
    plural: ` + plural + `
    singular: ` + strings.ToLower(kind) + `
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size:
                type: ` + sizeType + `
`
}

func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	assert.NilError(t, os.WriteFile(p, []byte(data), 0o644))
	return p
}

func crdNames(crds []CRD) []string {
	var out []string
	for _, c := range crds {
		out = append(out, c.Object.Name)
	}
	return out
}

func TestReadCRDs(t *testing.T) {
	dir := t.TempDir()
	bases := filepath.Join(dir, "bases")
	assert.NilError(t, os.Mkdir(bases, 0o755))
	writeFile(t, bases, "a.yaml", crdYAML("Apple", "integer"))
	// Two documents, one of them not a CRD, as a kustomize folder has.
	writeFile(t, bases, "b.yaml", crdYAML("Banana", "integer")+"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
	writeFile(t, bases, "notes.txt", "not read")
	empty := filepath.Join(dir, "empty")
	assert.NilError(t, os.Mkdir(empty, 0o755))
	writeFile(t, empty, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
	broken := writeFile(t, dir, "broken.yaml", "kind: CustomResourceDefinition\n  spec: [\n")

	tests := []struct {
		name    string
		paths   []string
		want    []string
		wantErr string
	}{
		{name: "folder", paths: []string{bases}, want: []string{"apples.example.com", "bananas.example.com"}},
		{name: "file", paths: []string{filepath.Join(bases, "b.yaml")}, want: []string{"bananas.example.com"}},
		{name: "missing path", paths: []string{filepath.Join(dir, "nope")}, wantErr: "CRD path " + filepath.Join(dir, "nope") + ": stat"},
		{name: "no CRD", paths: []string{empty}, wantErr: "CRD path " + empty + " holds no CustomResourceDefinition"},
		{name: "does not parse", paths: []string{broken}, wantErr: "decode " + broken + " (document 1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadCRDs(tc.paths...)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, crdNames(got), tc.want)
		})
	}
}

func TestReadCRDsFS(t *testing.T) {
	got, err := ReadCRDsFS(fstest.MapFS{
		"config/crd/bases/a.yaml": {Data: []byte(crdYAML("Apple", "integer"))},
		"README.md":               {Data: []byte("# not read")},
	})
	assert.NilError(t, err)
	assert.DeepEqual(t, crdNames(got), []string{"apples.example.com"})

	_, err = ReadCRDsFS(fstest.MapFS{"README.md": {Data: []byte("# no CRD")}})
	assert.ErrorContains(t, err, "hold no CustomResourceDefinition")
}

// TestInstallCRDs installs a CRD on the shared control plane and checks
// that scenarios can then name its resource, that installing it again is
// a no-op, that another spec under the same name is refused, and that a CRD
// the API server refuses fails with the server's message and the file.
func TestInstallCRDs(t *testing.T) {
	cp := controlPlane(t)
	ctx := context.Background()
	dir := t.TempDir()
	good := writeFile(t, dir, "coconut.yaml", crdYAML("Coconut", "integer"))
	crds, err := ReadCRDs(good)
	assert.NilError(t, err)

	_, _, err = cp.Resource("coconuts")
	assert.ErrorContains(t, err, `unknown resource "coconuts"`)
	assert.NilError(t, cp.InstallCRDs(ctx, crds))
	gvr, namespaced, err := cp.Resource("coconuts")
	assert.NilError(t, err)
	assert.DeepEqual(t, gvr, schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "coconuts"}, cmp.AllowUnexported())
	assert.Assert(t, namespaced)

	assert.NilError(t, cp.InstallCRDs(ctx, crds), "installing the same CRD again")

	other, err := ReadCRDs(writeFile(t, dir, "coconut-string.yaml", crdYAML("Coconut", "string")))
	assert.NilError(t, err)
	assert.ErrorContains(t, cp.InstallCRDs(ctx, other), "CRD coconuts.example.com from "+filepath.Join(dir, "coconut-string.yaml")+" differs from the one installed from "+good)

	// A CRD whose schema type does not exist: the API server refuses it.
	bad, err := ReadCRDs(writeFile(t, dir, "durian.yaml", crdYAML("Durian", "integr")))
	assert.NilError(t, err)
	err = cp.InstallCRDs(ctx, bad)
	assert.ErrorContains(t, err, "install CRD durians.example.com from "+filepath.Join(dir, "durian.yaml")+": the API server refused it")
	assert.ErrorContains(t, err, "integr")
}
