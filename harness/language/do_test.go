package language

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
)

// TestDoParts checks how do's arguments split at its ; words, and that an
// empty part is refused, saying where it is.
func TestDoParts(t *testing.T) {
	tests := []struct {
		name string
		args string
		want [][]string
		err  string
	}{
		{"one command", "reconcile webapps/web", [][]string{{"reconcile", "webapps/web"}}, ""},
		{"two commands", "create a.yaml ; await controller get a 200", [][]string{{"create", "a.yaml"}, {"await", "controller", "get", "a", "200"}}, ""},
		{"a ; inside a word is no separator", "annotate bob a/b x=1;2", [][]string{{"annotate", "bob", "a/b", "x=1;2"}}, ""},
		{"two in a row", "a ; ; b", nil, "command 2 of do is empty (nothing between the ; words 1 and 2)"},
		{"first", "; a", nil, "command 1 of do is empty (nothing before the first ;)"},
		{"last", "a ;", nil, "command 2 of do is empty (nothing after the last ;)"},
		{"alone", ";", nil, "command 1 of do is empty (nothing before the first ;)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DoParts(strings.Fields(tc.args))
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				assert.Assert(t, isUsage(err), "%v is no usage error", err)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tc.want)
		})
	}
}

// TestCheckDo checks which commands do may hold: not an assertion, an on,
// an explore or with line, another do, a command that does not exist or is
// the harness's own; and, as a hook's action, only hookable ones.
func TestCheckDo(t *testing.T) {
	noop := func(*Scenario, Invocation) error { return nil }
	cmds := map[string]*Command{}
	for _, c := range []*Command{
		{Name: "create", Group: "setup", Hookable: true},
		{Name: "await", Group: "run"},
		{Name: "field", Group: "assert"},
		{Name: "on", Group: "race"},
		{Name: "explore", Group: "race"},
		{Name: "do", Group: "race", Hookable: true},
		{Name: "explore-from", Group: "race", Hidden: true},
	} {
		c.Run, c.Summary = noop, "s"
		cmds[c.Name] = c
	}
	tests := []struct {
		args   string
		asHook bool
		err    string
	}{
		{"create a.yaml ; await controller get a 200", false, ""},
		{"create a.yaml ; ! create a.yaml", true, ""},
		{"create a.yaml ; await controller get a 200", true, "command 2 of do: await cannot run as a hook action, so neither can this do; these can: create, do"},
		{"create a.yaml ; field a x 1", false, "command 2 of do: field is an assertion"},
		{"on before a get b: create a.yaml", false, "command 1 of do: on arms a hook on a line of its own"},
		{"explore create a.yaml", false, "command 1 of do: explore cannot be part of do"},
		{"do create a.yaml", false, "command 1 of do: do cannot be part of do"},
		{"creat a.yaml", false, `command 1 of do: unknown command "creat" (did you mean "create"?)`},
		{"explore-from", false, `command 1 of do: unknown command "explore-from"`},
		{"create a.yaml ; !", false, `command 2 of do is a lone "!"`},
	}
	for _, tc := range tests {
		t.Run(tc.args, func(t *testing.T) {
			err := CheckDo(cmds, strings.Fields(tc.args), tc.asHook)
			if tc.err == "" {
				assert.NilError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.err)
		})
	}
}

// TestSplitWords checks that explore reads a workload's words as
// testscript does: single quotes keep spaces and ; inside a word, two
// quotes in a row are one, and a # outside quotes starts a comment.
func TestSplitWords(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"do a ; b", []string{"do", "a", ";", "b"}},
		{`do patch bob x merge '{"a": "b ; c"}' ; b`, []string{"do", "patch", "bob", "x", "merge", `{"a": "b ; c"}`, ";", "b"}},
		{"a 'it''s'", []string{"a", "it's"}},
		{"a '' b", []string{"a", "", "b"}},
		{"a\tb  # c d", []string{"a", "b"}},
		{"a '#' b", []string{"a", "#", "b"}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, SplitWords(tc.line)); diff != "" {
			t.Errorf("SplitWords(%q): (-want +got)\n%s", tc.line, diff)
		}
	}
}
