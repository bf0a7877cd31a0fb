package language

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/hooks"
)

// TestVerbHint checks the hint for a verb a scenario does not know: an
// HTTP method or a kubectl command names the Kubernetes verb it is, not
// the nearest spelling (put is update, not get), and a misspelling gets
// the nearest verb.
func TestVerbHint(t *testing.T) {
	tests := []struct{ verb, want string }{
		{"put", ` (an HTTP PUT of an object is the Kubernetes verb update: did you mean "update"?)`},
		{"PUT", ` (an HTTP PUT of an object is the Kubernetes verb update: did you mean "update"?)`},
		{"post", ` (an HTTP POST to a collection is the Kubernetes verb create: did you mean "create"?)`},
		{"apply", ` (kubectl apply, an HTTP PATCH, is the Kubernetes verb patch: did you mean "patch"?)`},
		{"gte", ` (did you mean "get"?)`},
		{"frobnicate", ""},
	}
	for _, tc := range tests {
		t.Run(tc.verb, func(t *testing.T) {
			assert.Equal(t, verbHint(tc.verb, hooks.Verbs), tc.want)
		})
	}
	// A verb the list does not hold gets no alias: attempts, say, counts
	// no watch.
	assert.Equal(t, verbHint("put", []string{"get", "list"}), ` (did you mean "get"?)`)
}
