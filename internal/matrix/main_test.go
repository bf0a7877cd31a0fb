package main

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/internal/assets"
)

// TestPrintTable: a scenario with the same verdict on every release is a
// row and no difference; one that differs is counted and its reason shown
// for each release it did not pass on; a failure anywhere is counted.
func TestPrintTable(t *testing.T) {
	releases := []assets.Release{{Kubernetes: "1.37.2"}, {Kubernetes: "1.35.4"}}
	table := map[string]map[string]outcome{
		"TestScenarios/same":   {"1.37.2": {"pass", ""}, "1.35.4": {"pass", ""}},
		"TestScenarios/newer":  {"1.37.2": {"pass", ""}, "1.35.4": {"skip", "newer.txtar:3: requires kubernetes>=1.36, and the control plane runs Kubernetes 1.35.4"}},
		"TestScenarios/broken": {"1.37.2": {"pass", ""}, "1.35.4": {"fail", "FAIL: broken.txtar:9: field ..."}},
	}
	var b strings.Builder
	failed := printTable(&b, releases, table)
	out := b.String()
	assert.Equal(t, failed, 1)
	for _, want := range []string{
		"| scenario | 1.37.2 | 1.35.4 |",
		"| TestScenarios/same | pass | pass |",
		"| TestScenarios/newer | pass | skip |",
		"| TestScenarios/broken | pass | FAIL |",
		"3 scenarios, 2 releases; 2 differ between releases, 1 fail on some release",
		"  TestScenarios/broken on 1.35.4: FAIL: broken.txtar:9: field ...",
		"  TestScenarios/newer on 1.35.4: newer.txtar:3: requires kubernetes>=1.36",
	} {
		assert.Assert(t, strings.Contains(out, want), "want %q in:\n%s", want, out)
	}
	assert.Assert(t, !strings.Contains(out, "same on"), out)
}

// TestReason finds the line that says why a scenario failed or was skipped.
func TestReason(t *testing.T) {
	assert.Equal(t, reason([]string{"    > create a.yaml\n", "    FAIL: a.txtar:3: field x: want 1, got 2\n"}), "FAIL: a.txtar:3: field x: want 1, got 2")
	assert.Equal(t, reason([]string{"    a_test.go:1: a.txtar:1: requires kubernetes>=1.36, and the control plane runs Kubernetes 1.35.4\n"}),
		"a_test.go:1: a.txtar:1: requires kubernetes>=1.36, and the control plane runs Kubernetes 1.35.4")
	assert.Equal(t, reason([]string{"PASS\n"}), "")
}
