package language

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/hooks"
)

// TestCommandsAreDocumented checks the usage data every command must carry,
// since help and the language reference are generated from it.
func TestCommandsAreDocumented(t *testing.T) {
	groups := map[string]bool{"setup": true, "write": true, "race": true, "run": true, "assert": true}
	for _, c := range Builtins() {
		t.Run(c.Name, func(t *testing.T) {
			assert.Assert(t, regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(c.Name))
			assert.Assert(t, c.Summary != "" && !strings.HasSuffix(c.Summary, "."), "summary %q", c.Summary)
			assert.Assert(t, groups[c.Group], "group %q", c.Group)
			assert.Assert(t, c.Run != nil)
			assert.Assert(t, c.MaxArgs == -1 || c.MaxArgs >= c.MinArgs)
			assert.Assert(t, strings.HasPrefix(c.Usage(), "usage: "+c.Name))
			assert.Assert(t, !freshRead.MatchString(c.Summary),
				"summary %q promises a fresh read, but Scenario.ReadRef answers from the trace unless the server's last answer may be stale", c.Summary)
		})
	}
}

// freshRead matches a summary that says the harness reads an object fresh
// from the API server, which Scenario.ReadRef does not promise.
var freshRead = regexp.MustCompile(`(?i)read fresh|fresh(ly)? from the (API )?server`)

// TestSummariesSayWhereStateComesFrom checks that every assertion that
// reads an object's state through Scenario.read, directly or through the
// functions it calls, says where that state comes from (readsState), so
// that help and the language reference tell what the code does. Which
// assertions read is found in the source, not listed by hand.
func TestSummariesSayWhereStateComesFrom(t *testing.T) {
	readers := callersOf(t, "ReadRef")
	var reading []string
	for _, c := range Builtins() {
		if c.Group != "assert" {
			continue
		}
		name := runtime.FuncForPC(reflect.ValueOf(c.Run).Pointer()).Name()
		if !readers[name[strings.LastIndex(name, ".")+1:]] {
			continue
		}
		reading = append(reading, c.Name)
		text := c.Summary
		if c.Detail != "" {
			text = c.Detail // the whole text, which help scenario NAME shows
		}
		assert.Assert(t, strings.Contains(text, readsState), "%s reads the object through Scenario.read, but its text does not say so: %q", c.Name, text)
	}
	// The ones known today, so that a call graph that finds nothing
	// cannot pass this test.
	for _, name := range []string{"field", "annotation", "owned-by", "condition"} {
		assert.Assert(t, slices.Contains(reading, name), "%s no longer reads through Scenario.read? found %v", name, reading)
	}
}

// callersOf returns the names of the package's functions and methods that
// call a function or method called name, directly or through others, by
// name: an over-approximation, which can only ask for more summaries.
func callersOf(t *testing.T, name string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*.go")
	assert.NilError(t, err)
	calls := map[string][]string{}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		assert.NilError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					switch f := call.Fun.(type) {
					case *ast.Ident:
						calls[fn.Name.Name] = append(calls[fn.Name.Name], f.Name)
					case *ast.SelectorExpr:
						calls[fn.Name.Name] = append(calls[fn.Name.Name], f.Sel.Name)
					}
				}
				return true
			})
		}
	}
	reach := map[string]bool{name: true}
	for grew := true; grew; {
		grew = false
		for caller, callees := range calls {
			if !reach[caller] && slices.ContainsFunc(callees, func(c string) bool { return reach[c] }) {
				reach[caller], grew = true, true
			}
		}
	}
	return reach
}

// TestTableRefusesDuplicates checks that a command table cannot hold two
// commands of one name, from the language, an extension or the options.
func TestTableRefusesDuplicates(t *testing.T) {
	dup := &Command{Name: "create", Group: "setup", Summary: "another create", Run: func(*Scenario, Invocation) error { return nil }}
	_, err := Table(nil, []*Command{dup})
	assert.Error(t, err, "command create registered twice")
	_, err = Table([]*Extension{{Name: "x", Commands: []*Command{dup}}}, nil)
	assert.ErrorContains(t, err, "extension x: command create registered twice")
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
