package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// module is racekit's module path, which the layers below leave out.
const module = "github.com/racekit/racekit"

// layer is a set of racekit's packages at one height: a package may import
// those of a lower layer, and of its own only when the layer is one group
// (Within), such as the reference controller's packages.
type layer struct {
	Name     string
	Packages []string // relative to the module; "." is its root
	Within   bool
}

// layers lists racekit's packages from the lowest up, the one place that
// says which way dependencies point (docs/architecture.md draws it). Two
// layers at one height are listed with the same Height: neither may import
// the other.
var layers = []struct {
	Height int
	layer
}{
	{0, layer{Name: "support", Packages: []string{"internal/hint", "internal/tail", "internal/assets", "internal/watchdog", "internal/reaper", "internal/mermaid", "internal/requestforms", "internal/roundtrip", "internal/gotestjson", "harness/internal/testctrl", "compare"}}},
	{1, layer{Name: "hook points", Packages: []string{"hooks"}}},
	{1, layer{Name: "the reference controller", Packages: []string{"controller", "controller/api/v1alpha1", "controller/registry", "controller/teaching"}, Within: true}},
	{1, layer{Name: "the control-plane build", Packages: []string{"internal/assets/envtest"}}},
	{1, layer{Name: "the stress run", Packages: []string{"internal/stress"}}},
	{1, layer{Name: "the release matrix", Packages: []string{"internal/matrix"}}},
	{1, layer{Name: "the timings table", Packages: []string{"internal/timings"}}},
	{2, layer{Name: "the racing proxy", Packages: []string{"harness/proxy"}}},
	{3, layer{Name: "control plane", Packages: []string{"harness/controlplane"}}},
	{4, layer{Name: "record", Packages: []string{"harness/record"}}},
	{4, layer{Name: "test control planes", Packages: []string{"harness/internal/testcp"}}},
	{5, layer{Name: "referee", Packages: []string{"harness/referee"}}},
	{6, layer{Name: "language", Packages: []string{"harness/language"}}},
	{7, layer{Name: "API semantics", Packages: []string{"harness/semantics"}}},
	{7, layer{Name: "controllers", Packages: []string{"harness/controllers"}}},
	{8, layer{Name: "views", Packages: []string{"harness/views"}}},
	{9, layer{Name: "running", Packages: []string{"harness/running"}}},
	{10, layer{Name: "explore", Packages: []string{"harness/explore"}}},
	{11, layer{Name: "explore auto", Packages: []string{"harness/auto"}}},
	{12, layer{Name: "self-checks", Packages: []string{"harness/selfcheck"}}},
	{13, layer{Name: "the façade", Packages: []string{"harness"}}},
	{14, layer{Name: "the public API", Packages: []string{"."}}},
	{15, layer{Name: "the reference controller's racing side", Packages: []string{"controller/race"}}},
	{15, layer{Name: "the catalogue", Packages: []string{"scenarios"}}},
	{15, layer{Name: "the Gomega matchers", Packages: []string{"match"}}},
	{16, layer{Name: "the command", Packages: []string{"cmd/racekit"}}},
}

// place is where a package sits: its layer's height and name.
type place struct {
	height int
	layer  layer
}

// placeOf returns each listed package's place.
func placeOf() map[string]place {
	out := map[string]place{}
	for _, l := range layers {
		for _, p := range l.Packages {
			out[p] = place{l.Height, l.layer}
		}
	}
	return out
}

// offences returns what in imports, each package's imports of racekit's
// own packages, breaks the layers: an import of a package at the same
// height or higher (but within a layer that is one group), and a package
// the layers do not list.
func offences(imports map[string][]string) []string {
	at := placeOf()
	var out []string
	for _, pkg := range slices.Sorted(maps.Keys(imports)) {
		p, ok := at[pkg]
		if !ok {
			out = append(out, fmt.Sprintf("%s is in no layer: add it to layers in harness/layers_test.go, and to docs/architecture.md", pkg))
			continue
		}
		for _, imp := range imports[pkg] {
			q, ok := at[imp]
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("%s imports %s, which is in no layer", pkg, imp))
			case q.layer.Name == p.layer.Name && p.layer.Within:
			case q.height >= p.height:
				out = append(out, fmt.Sprintf("%s (%s) imports %s (%s), which is not below it", pkg, p.layer.Name, imp, q.layer.Name))
			}
		}
	}
	return out
}

// TestLayers reads racekit's import graph with go list and checks that
// every dependency points down the layers. The harness's own packages are
// held to it in their tests too, but for the façade's, which race the
// reference controller from above.
func TestLayers(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", module+"/...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	assert.NilError(t, err, stderr.String())
	imports := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		pkg := rel(f[0])
		deps := strings.Fields(f[1])
		if strings.HasPrefix(pkg, "harness/") {
			deps = append(deps, strings.Fields(f[2])...)
		}
		var own []string
		for _, d := range deps {
			if d == module || strings.HasPrefix(d, module+"/") {
				if r := rel(d); r != pkg && !slices.Contains(own, r) {
					own = append(own, r)
				}
			}
		}
		imports[pkg] = own
	}
	assert.Assert(t, len(imports) > 20, "go list found %d packages: %s", len(imports), out)
	for _, o := range offences(imports) {
		t.Error(o)
	}
}

// rel returns pkg relative to the module: "." for its root.
func rel(pkg string) string {
	if pkg == module {
		return "."
	}
	return strings.TrimPrefix(pkg, module+"/")
}

// TestOffences checks the check itself on graphs written by hand: each
// breach of the layers is found, and nothing else.
func TestOffences(t *testing.T) {
	tests := []struct {
		name    string
		imports map[string][]string
		want    []string
	}{
		{"down", map[string][]string{"harness/explore": {"harness/language", "harness/record", "hooks"}}, nil},
		{"up", map[string][]string{"harness/record": {"harness/language"}}, []string{"harness/record (record) imports harness/language (language), which is not below it"}},
		{"sideways", map[string][]string{"harness/controllers": {"harness/semantics"}}, []string{"harness/controllers (controllers) imports harness/semantics (API semantics), which is not below it"}},
		{"views under running", map[string][]string{"harness/views": {"harness/running"}}, []string{"harness/views (views) imports harness/running (running), which is not below it"}},
		{"within one group", map[string][]string{"controller": {"controller/registry"}}, nil},
		{"the controller reaches the hooks", map[string][]string{"controller": {"hooks"}}, []string{"controller (the reference controller) imports hooks (hook points), which is not below it"}},
		{"the controller reaches the harness", map[string][]string{"controller": {"harness"}}, []string{"controller (the reference controller) imports harness (the façade), which is not below it"}},
		{"unlisted", map[string][]string{"harness/new": nil}, []string{"harness/new is in no layer: add it to layers in harness/layers_test.go, and to docs/architecture.md"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.DeepEqual(t, offences(tc.imports), tc.want)
		})
	}
}
