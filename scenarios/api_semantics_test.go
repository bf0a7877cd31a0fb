package scenarios

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

// semanticsDoc is the page whose table TestAPISemanticsDoc keeps in step
// with the scenarios.
const semanticsDoc = "../docs/api-semantics.md"

// The table sits between these markers; the prose around it is free.
const (
	tableStart = "<!-- table: generated from scenarios/api_*.txtar by go test ./scenarios -run TestAPISemanticsDoc -update; do not edit -->"
	tableEnd   = "<!-- end of table -->"
)

// TestAPISemanticsDoc regenerates the table of docs/api-semantics.md from
// the api_*.txtar scenarios and fails when the page is stale; -update
// rewrites it. Each row is a "# claim:" of a scenario. Its Deployment and
// WebApp cells are the status codes the scenario's own assertions expect
// (answered, and next WATCH ERROR), which pass only when the server sends
// them, with the "# deployment:" and "# webapp:" notes that follow the
// claim. So the table cannot say what the scenarios do not prove.
func TestAPISemanticsDoc(t *testing.T) {
	// gotest.tools/v3/assert is not used here: it defines its own -update
	// flag, which would clash with this package's.
	files, err := filepath.Glob("api_*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no api_*.txtar scenarios: %v", err)
	}
	slices.SortStableFunc(files, func(a, b string) int { return rank(a) - rank(b) })
	var claims []claim
	for _, f := range files {
		cs, err := readClaims(f)
		if err != nil {
			t.Fatal(err)
		}
		claims = append(claims, cs...)
	}
	table := renderTable(claims)

	page, err := os.ReadFile(semanticsDoc)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(page), tableStart)
	if !ok {
		t.Fatalf("%s lacks the line %s", semanticsDoc, tableStart)
	}
	old, after, ok := strings.Cut(rest, tableEnd)
	if !ok {
		t.Fatalf("%s lacks the line %s", semanticsDoc, tableEnd)
	}
	if *update {
		if err := os.WriteFile(semanticsDoc, []byte(before+tableStart+"\n"+table+tableEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(strings.TrimSpace(old), strings.TrimSpace(table)); diff != "" {
		t.Errorf("%s is stale: run go test ./scenarios -run TestAPISemanticsDoc -update (-page +scenarios)\n%s", semanticsDoc, diff)
	}
}

// order is the order of the table: the issue's, from updates to watches and
// subresources. A scenario not listed comes last.
var order = []string{
	"api_update_without_rv.txtar",
	"api_patch_stale_rv.txtar",
	"api_patch_without_rv.txtar",
	"api_apply_field_managers.txtar",
	"api_rv_opaque.txtar",
	"api_delete_preconditions.txtar",
	"api_list_rv.txtar",
	"api_watch_resume.txtar",
	"api_watch_compaction.txtar",
	"api_subresources_generation.txtar",
}

func rank(file string) int {
	if i := slices.Index(order, filepath.Base(file)); i >= 0 {
		return i
	}
	return len(order)
}

// columns are the table's result columns, by the resource names scenarios
// write.
var columns = []struct{ title, resource string }{
	{"Deployment", "deployments"},
	{"WebApp", "webapps"},
}

// claim is one row: a common claim and what each resource did.
type claim struct {
	text, file string
	line       int
	// results and notes are by column title.
	results map[string][]string
	notes   map[string]string
}

// readClaims reads the claims of one scenario: each "# claim:" line opens
// one, "# deployment:" and "# webapp:" lines note what the server did, and
// the codes asserted up to the next claim or "# phase" are its results.
func readClaims(file string) ([]claim, error) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		return nil, err
	}
	var claims []claim
	open := false
	watches := map[string]string{} // watch name → ACTOR RESOURCE
	sc := bufio.NewScanner(bytes.NewReader(ar.Comment))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		pos := fmt.Sprintf("%s:%d", file, n)
		if text, ok := strings.CutPrefix(line, "# claim:"); ok {
			claims = append(claims, claim{text: strings.TrimSpace(text), file: filepath.Base(file), line: n,
				results: map[string][]string{}, notes: map[string]string{}})
			open = true
			continue
		}
		if strings.HasPrefix(line, "# phase") {
			open = false
		}
		var cur *claim
		if open {
			cur = &claims[len(claims)-1]
		}
		if strings.HasPrefix(line, "#") {
			for _, col := range columns {
				if note, ok := strings.CutPrefix(line, "# "+strings.ToLower(col.title)+":"); ok && cur != nil {
					cur.notes[col.title] = strings.TrimSpace(note)
				}
			}
			continue
		}
		words, err := splitWords(line)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", pos, err)
		}
		if len(words) > 0 && words[0] == "!" {
			words = words[1:]
		}
		switch {
		case len(words) >= 4 && words[0] == "watch":
			watches[words[3]] = words[1] + " " + words[2]
		case len(words) >= 6 && words[0] == "answered" && cur != nil:
			// answered ACTOR VERB OBJECT CODE REASON: "alice update status: 409 Conflict"
			label := words[1] + " " + words[2]
			if parts := strings.Split(words[3], "/"); len(parts) == 3 {
				label += " " + parts[2]
			}
			cur.add(words[3], label+": "+words[4]+" "+words[5])
		case len(words) >= 4 && words[0] == "next" && words[2] == "ERROR" && cur != nil:
			// next WATCH ERROR CODE [REASON]: "alice watch event: ERROR 410 Expired"
			actor, resource, _ := strings.Cut(watches[words[1]], " ")
			cur.add(resource, actor+" watch event: ERROR "+strings.Join(words[3:], " "))
		}
	}
	for _, c := range claims {
		for _, col := range columns {
			if len(c.results[col.title]) == 0 {
				return nil, fmt.Errorf("%s:%d: claim %q asserts no status code for a %s", file, c.line, c.text, col.title)
			}
			if c.notes[col.title] == "" {
				return nil, fmt.Errorf("%s:%d: claim %q has no # %s: note", file, c.line, c.text, strings.ToLower(col.title))
			}
		}
	}
	return claims, nil
}

// add records result under the column of the resource in object
// ("deployments/web/status" → Deployment); other resources have no column.
func (c *claim) add(object, result string) {
	resource, _, _ := strings.Cut(object, "/")
	for _, col := range columns {
		if resource == col.resource || resource+"s" == col.resource {
			if !slices.Contains(c.results[col.title], result) {
				c.results[col.title] = append(c.results[col.title], result)
			}
		}
	}
}

// renderTable renders the claims as a Markdown table, one row each.
func renderTable(claims []claim) string {
	var b strings.Builder
	b.WriteString("| Claim |")
	for _, col := range columns {
		b.WriteString(" " + col.title + " |")
	}
	b.WriteString(" Scenario |\n|---|")
	for range columns {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for _, c := range claims {
		fmt.Fprintf(&b, "| %s |", cell(c.text))
		for _, col := range columns {
			fmt.Fprintf(&b, " **%s**: %s |", cell(strings.Join(c.results[col.title], "; ")), cell(c.notes[col.title]))
		}
		fmt.Fprintf(&b, " [%s](../scenarios/%s#L%d) |\n", strings.TrimSuffix(c.file, ".txtar"), c.file, c.line)
	}
	return b.String()
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// splitWords splits a script line into words as testscript does: on spaces,
// with single quotes keeping spaces (” is a quote inside them), and a
// trailing # comment dropped.
func splitWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quoted && c == '\'' && i+1 < len(line) && line[i+1] == '\'':
			w.WriteByte('\'')
			i++
		case c == '\'':
			quoted, inWord = !quoted, true
		case quoted:
			w.WriteByte(c)
		case c == '#' && !inWord:
			i = len(line)
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unterminated quote")
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}
