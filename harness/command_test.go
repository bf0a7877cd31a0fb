package harness

import (
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/hooks"
)

// TestCommandsAreDocumented checks the usage data every command must carry,
// since help and the language reference are generated from it.
func TestCommandsAreDocumented(t *testing.T) {
	groups := map[string]bool{"setup": true, "write": true, "race": true, "assert": true}
	for _, c := range Commands() {
		t.Run(c.Name, func(t *testing.T) {
			assert.Assert(t, regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(c.Name))
			assert.Assert(t, c.Summary != "" && !strings.HasSuffix(c.Summary, "."), "summary %q", c.Summary)
			assert.Assert(t, groups[c.Group], "group %q", c.Group)
			assert.Assert(t, c.Run != nil)
			assert.Assert(t, c.MaxArgs == -1 || c.MaxArgs >= c.MinArgs)
			assert.Assert(t, strings.HasPrefix(c.Usage(), "usage: "+c.Name))
		})
	}
}

func TestRegisterRefusesDuplicates(t *testing.T) {
	defer func() {
		r := recover()
		assert.Assert(t, r != nil, "a second command named create must be refused")
		assert.Assert(t, strings.Contains(r.(string), `"create" registered twice`))
	}()
	register(&Command{Name: "create"})
}

func TestParseOccurrence(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		wantErr bool
	}{
		{"1st", 1, false}, {"2nd", 2, false}, {"3rd", 3, false}, {"4th", 4, false},
		{"11th", 11, false}, {"12th", 12, false}, {"21st", 21, false}, {"every", hooks.Every, false},
		{"1nd", 0, true}, {"0th", 0, true}, {"first", 0, true}, {"#1", 0, true}, {"1", 0, true}, {"", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseOccurrence(tc.in)
			if tc.wantErr {
				assert.ErrorContains(t, err, "bad occurrence")
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, got, tc.want)
		})
	}
}

func TestSuggest(t *testing.T) {
	tests := []struct{ name, want string }{
		{"creat", ` (did you mean "create"?)`},
		{"aftr", ` (did you mean "after"?)`},
		{"zzzzzzzz", ""},
	}
	for _, tc := range tests {
		assert.Equal(t, suggest(tc.name, []string{"create", "after", "annotate"}), tc.want, tc.name)
	}
}
