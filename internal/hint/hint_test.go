package hint

import (
	"testing"

	"gotest.tools/v3/assert"
)

func TestDidYouMean(t *testing.T) {
	candidates := []string{"create", "after", "annotate", "stale-object"}
	tests := []struct{ name, want string }{
		{"creat", ` (did you mean "create"?)`},
		{"aftr", ` (did you mean "after"?)`},
		{"stale-objet", ` (did you mean "stale-object"?)`},
		{"zzzzzzzz", ""},
		{"", ""},
	}
	for _, tc := range tests {
		assert.Equal(t, DidYouMean(tc.name, candidates), tc.want, tc.name)
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"get", "gte", 2}, {"same", "same", 0},
	}
	for _, tc := range tests {
		assert.Equal(t, Distance(tc.a, tc.b), tc.want, "%s/%s", tc.a, tc.b)
	}
}
