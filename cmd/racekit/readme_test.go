package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
)

// TestReadmeLayout checks that the README's Layout names every folder of
// the repository's top level, and every folder directly under internal/,
// testdata/ and tools/, as NAME/, and every script in tools/.
func TestReadmeLayout(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	assert.NilError(t, err)
	_, rest, ok := strings.Cut(string(data), "## Layout\n\n```\n")
	assert.Assert(t, ok, "README.md has no Layout block")
	layout, _, ok := strings.Cut(rest, "```")
	assert.Assert(t, ok, "README.md's Layout block does not end")

	var missing []string
	for _, parent := range []string{"", "internal", "testdata", "tools"} {
		entries, err := os.ReadDir(filepath.Join("../..", parent))
		assert.NilError(t, err)
		for _, e := range entries {
			name := e.Name() + "/"
			switch {
			case strings.HasPrefix(e.Name(), "."):
				continue
			case !e.IsDir() && parent == "tools":
				name = e.Name()
			case !e.IsDir():
				continue
			}
			if parent == "" && !strings.Contains("\n"+layout, "\n"+name) ||
				parent != "" && !strings.Contains(layout, name) {
				missing = append(missing, filepath.Join(parent, name))
			}
		}
	}
	assert.Assert(t, len(missing) == 0, "README.md's Layout does not name %s:\n%s", strings.Join(missing, ", "), layout)
}

// exampleBlock is a code block of the README that shows a file of the
// repository: the whole file, or an excerpt of whole lines.
var exampleBlock = regexp.MustCompile("(?s)<!-- example-(file|excerpt): begin (\\S+) -->\n```[a-z]*\n(.*?)```\n<!-- example-(?:file|excerpt): end -->")

// TestReadmeExamples checks the README's code blocks that show files of the
// repository, as "Race your own controller" shows the example module's race
// test and a scenario: an example-file block must be the file it names,
// whole, and an example-excerpt block a run of whole lines of it.
func TestReadmeExamples(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	assert.NilError(t, err)
	blocks := exampleBlock.FindAllStringSubmatch(string(data), -1)
	kinds := map[string]int{}
	for _, b := range blocks {
		kind, path, shown := b[1], b[2], b[3]
		kinds[kind]++
		file, err := os.ReadFile(filepath.Join("../..", path))
		if err != nil {
			t.Errorf("README.md shows %s, which cannot be read: %v", path, err)
			continue
		}
		switch {
		case kind == "file" && shown != string(file):
			t.Errorf("README.md's copy of %s is stale; copy the file again (-file +README):\n%s", path, cmp.Diff(string(file), shown))
		case kind == "excerpt" && !strings.Contains("\n"+string(file), "\n"+shown):
			t.Errorf("README.md's excerpt of %s is not a run of its lines; copy them again. Excerpt:\n%s", path, shown)
		}
	}
	assert.Assert(t, kinds["file"] > 0 && kinds["excerpt"] > 0,
		"README.md must show an example-file and an example-excerpt block, and shows %v: Race your own controller lost its markers", kinds)
}
