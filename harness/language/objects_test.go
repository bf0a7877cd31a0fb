package language

import (
	"testing"

	"gotest.tools/v3/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestJudgeCopy checks when a read the trace answered differs from the
// API server's own answer: only while the trace still holds the copy it
// gave. A write since the read (the trace forgot the object, or holds a
// newer copy) explains a server that is ahead.
func TestJudgeCopy(t *testing.T) {
	cm := func(rv, value string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "resourceVersion": rv},
			"data":     map[string]any{"value": value},
		}}
		return u
	}
	r := Ref{Name: "c"}
	tests := []struct {
		name            string
		fresh, obj, now *unstructured.Unstructured
		wrong           bool
	}{
		{"the same", cm("5", "1"), cm("5", "1"), cm("5", "1"), false},
		{"the same, then forgotten", cm("5", "1"), cm("5", "1"), nil, false},
		{"differs while the trace holds it", cm("5", "2"), cm("5", "1"), cm("5", "1"), true},
		{"older resourceVersion while the trace holds it", cm("7", "2"), cm("5", "1"), cm("5", "1"), true},
		{"written since: the trace forgot it", cm("7", "2"), cm("5", "1"), nil, false},
		{"written since: the trace holds the newer copy", cm("7", "2"), cm("5", "1"), cm("7", "2"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := judgeCopy(r, tc.fresh, tc.obj, tc.now)
			if tc.wrong {
				assert.ErrorContains(t, err, "the trace's copy of")
				return
			}
			assert.NilError(t, err)
		})
	}
}
