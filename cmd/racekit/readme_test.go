package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
