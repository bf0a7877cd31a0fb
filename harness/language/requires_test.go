package language

import (
	"testing"

	"gotest.tools/v3/assert"
)

// TestRequiresConstraint compares releases as requires does: on as many
// numbers as the constraint's version has.
func TestRequiresConstraint(t *testing.T) {
	for _, tc := range []struct {
		arg, release string
		holds        bool
	}{
		{"kubernetes>=1.35", "1.35.0", true},
		{"kubernetes>=1.35", "1.34.4", false},
		{"kubernetes>=1.35", "1.37.2", true},
		{"kubernetes>1.35", "1.35.4", false},
		{"kubernetes>1.35.3", "1.35.4", true},
		{"kubernetes<1.37", "1.36.3", true},
		{"kubernetes<1.37", "1.37.2", false},
		{"kubernetes<=1.37", "1.37.2", true},
		{"kubernetes==1.36", "1.36.3", true},
		{"kubernetes==1.36.2", "1.36.3", false},
		{"kubernetes==v1.37.2", "1.37.2", true},
		{"kubernetes>=2", "1.37.2", false},
	} {
		c, err := parseConstraint(tc.arg)
		assert.NilError(t, err, tc.arg)
		release, err := parseVersion(tc.release)
		assert.NilError(t, err)
		assert.Equal(t, c.holds(release), tc.holds, "%s on %s", tc.arg, tc.release)
	}
}
