package main

import (
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness"
	"github.com/racekit/racekit/hooks"
)

// TestDocumentFolds checks --trace mermaid's diagram against --unfold: a
// kube-controller-manager that lists and watches more resources than a
// timeline shows row by row has them folded into one note, unless
// racekit run --unfold asked for each.
func TestDocumentFolds(t *testing.T) {
	var tr harness.Trace
	for i := 1; i <= 30; i++ {
		call := hooks.Call{Actor: "kcm", Verb: "list", Resource: "r" + strconv.Itoa(i)}
		tr = append(tr, harness.Trace{{Exchange: &harness.Exchange{Seq: i, Call: call, Code: 200}}}...)
	}
	results := []harness.Result{{Name: "s", Passed: true, Trace: tr}}
	for _, unfold := range []bool{false, true} {
		doc, err := document("mermaid", results, unfold)
		assert.NilError(t, err)
		assert.Equal(t, strings.Count(doc, "kcm->>"), map[bool]int{false: 0, true: 30}[unfold], "unfold=%v:\n%s", unfold, doc)
		assert.Equal(t, strings.Contains(doc, "background reads folded"), !unfold, "unfold=%v:\n%s", unfold, doc)
	}
}
