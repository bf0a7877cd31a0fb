package teaching_test

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/controller/teaching"
)

// TestVariants checks the table: nine variants, in the documented order,
// each with a summary and a rule, and each found by its name.
func TestVariants(t *testing.T) {
	want := []string{
		teaching.StaleObject, teaching.RVPlusOne, teaching.UnboundedRetry, teaching.SideEffectInRetry,
		teaching.StatusNoGenerationCheck, teaching.RetryEverything, teaching.BlindUpdate, teaching.NoOwnerCheck,
		teaching.FinalizerBeforeCleanup,
	}
	assert.DeepEqual(t, teaching.Names(), want)
	for _, v := range teaching.Variants() {
		assert.Assert(t, !v.IsZero())
		assert.Assert(t, v.Summary() != "" && v.Rule() != "", "%s lacks a summary or a rule", v.Name())
		assert.Assert(t, !strings.Contains(v.Summary(), "\n"), "%s: a summary is one line", v.Name())
		got, err := teaching.Lookup(v.Name())
		assert.NilError(t, err)
		assert.Equal(t, got, v)
		assert.Assert(t, got.Is(v.Name()))
		assert.Equal(t, got.String(), v.Name())
	}
}

// TestZeroVariant checks that the zero Variant is the production
// controller: no name, no rule, and it is no variant.
func TestZeroVariant(t *testing.T) {
	var v teaching.Variant
	assert.Assert(t, v.IsZero())
	assert.Equal(t, v.Name(), "")
	assert.Equal(t, v.Rule(), "")
	assert.Equal(t, v.String(), "production")
	for _, name := range append(teaching.Names(), "") {
		assert.Assert(t, !v.Is(name), "the zero Variant is not %q", name)
	}
}

// TestLookupUnknown checks that an unknown name is refused with the nearest
// name and the list, and that "" names no variant.
func TestLookupUnknown(t *testing.T) {
	tests := []struct{ name, want string }{
		{"stale-objet", `unknown teaching variant "stale-objet" (did you mean "stale-object"?); the variants are stale-object, rv-plus-one, unbounded-retry, side-effect-in-retry, status-no-generation-check, retry-everything, blind-update, no-owner-check, finalizer-before-cleanup`},
		{"rv+1", `unknown teaching variant "rv+1"; the variants are`},
		{"", `unknown teaching variant ""; the variants are`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := teaching.Lookup(tc.name)
			assert.ErrorContains(t, err, tc.want)
			assert.Assert(t, v.IsZero())
		})
	}
}
