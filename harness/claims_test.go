package harness

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"
)

// TestClaimsAsValues runs failing twins of the assertions and checks that
// each failure carries what its claim was about, wanted and saw, as values
// (Failure.Claim, Want, Got), for a test of an outcome to compare without
// reading the message.
func TestClaimsAsValues(t *testing.T) {
	for _, tc := range []struct {
		file, claim, want, got string
	}{
		{"field_wrong_value", "webapps/web spec.replicas", "2", "1"},
		{"annotation_missing", "webapps/web annotation team", "team", "<absent>"},
		{"annotation_wrong_value", "webapps/web annotation team", "team=red", "team=blue"},
		{"conflicts_wrong_count", "setup create webapps/web 409 Conflicts", "1", "0"},
		{"wire_wrong_code", "setup create webapps/web 200s", "1", "0"},
		{"fired_wrong_count", "hook 1 fired", "2", "1"},
		{"condition_wrong_status", "webapps/web condition Ready", "Ready False", "Ready True"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			c, opts := withRef(t, "../testdata/false/"+tc.file+".txtar")
			res := RunFiles(context.Background(), c, opts)
			assert.Equal(t, len(res), 1)
			assert.Assert(t, !res[0].Passed, "the twin passed")
			f := res[0].Failures[len(res[0].Failures)-1]
			assert.DeepEqual(t, []string{f.Claim, f.Want, f.Got}, []string{tc.claim, tc.want, tc.got})
		})
	}
}
