package controller_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/controller"
	"github.com/racekit/racekit/controller/teaching"
)

// TestProductionBreaksNoRule checks that New builds the production
// controller, which is no teaching variant: Options has no field that could
// select one, so neither has RunOptions, which embeds it. Only
// NewTeachingVariant builds a variant, and the zero Variant is production.
func TestProductionBreaksNoRule(t *testing.T) {
	assert.Assert(t, controller.New(nil, controller.Options{}).Variant().IsZero())
	v, err := teaching.Lookup(teaching.StaleObject)
	assert.NilError(t, err)
	assert.Equal(t, controller.NewTeachingVariant(nil, controller.Options{}, v).Variant(), v)
	assert.Assert(t, controller.NewTeachingVariant(nil, controller.Options{}, teaching.Variant{}).Variant().IsZero())
}

// TestTeachingVariantsStayInTheRacingSide reads the module's Go source,
// tests aside, and checks who may select a teaching variant: only
// controller/race, which plugs the reference controller into racekit,
// calls NewTeachingVariant or RunTeachingVariant; the two files that start the production
// controller (controller/run.go for controller.Run, cmd/racekit/controller.go
// for the racekit controller command) do not import package teaching. It
// does not follow calls: the controller's own code names the variants, in
// the marked places that a Reconciler built by New skips
// (TestProductionBreaksNoRule checks that New builds none). No other
// package but package teaching itself imports it: the harness knows no
// controller, let alone its variants.
func TestTeachingVariantsStayInTheRacingSide(t *testing.T) {
	const teachingPath = `"github.com/racekit/racekit/controller/teaching"`
	root := filepath.Join("..")
	var callers, importers []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "tools" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		for _, imp := range f.Imports {
			if imp.Path.Value == teachingPath {
				importers = append(importers, rel)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok && (calls(call, "NewTeachingVariant") || calls(call, "RunTeachingVariant")) {
				callers = append(callers, rel)
			}
			return true
		})
		return nil
	})
	assert.NilError(t, err)

	for _, c := range callers {
		assert.Assert(t, strings.HasPrefix(c, "controller/race/"), "%s calls NewTeachingVariant or RunTeachingVariant: only the reference controller's racing side (controller/race) may build or run a teaching variant", c)
	}
	assert.Assert(t, len(callers) > 0, "controller/race no longer calls NewTeachingVariant; this test checks nothing")
	for _, production := range []string{"controller/run.go", "cmd/racekit/controller.go"} {
		assert.Assert(t, !slices.Contains(importers, production), "%s imports package teaching: the production controller must not be able to select a variant", production)
	}
	for _, imp := range importers {
		dir := filepath.ToSlash(filepath.Dir(imp))
		ok := dir == "controller" || dir == "controller/teaching" || dir == "controller/race" || dir == "cmd/racekit"
		assert.Assert(t, ok, "%s imports package teaching; only the controller, its racing side (controller/race) and racekit run may", imp)
	}
}

// calls reports whether call calls a function called name, plain or
// through a package.
func calls(call *ast.CallExpr, name string) bool {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name == name
	case *ast.SelectorExpr:
		return fn.Sel.Name == name
	}
	return false
}
