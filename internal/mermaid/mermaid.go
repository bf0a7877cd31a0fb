// Package mermaid checks diagrams with the real Mermaid parser, which
// `make mermaid` installs from npm into the user's cache, for racekit's
// own tests: a diagram racekit draws must be one Mermaid accepts. It also
// hands out the Mermaid library itself, for pages that draw diagrams with
// no network.
package mermaid

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Dir returns where make mermaid installed the parser for the checkout at
// root, and an error that says what to run when it has not.
func Dir(root string) (string, error) {
	pkg, err := os.ReadFile(filepath.Join(root, "tools", "mermaid", "package.json"))
	if err != nil {
		return "", err
	}
	var p struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(pkg, &p); err != nil {
		return "", fmt.Errorf("read tools/mermaid/package.json: %w", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "racekit", "mermaid-"+p.Dependencies["mermaid"])
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "mermaid", "package.json")); err != nil {
		return "", fmt.Errorf("the Mermaid parser is not installed in %s: run make mermaid (it needs node and npm)", dir)
	}
	return dir, nil
}

// Check parses files with the parser and returns what it printed: a line
// "FILE: ok (TYPE)" per diagram it accepts, and an error, with the output,
// when it refuses one.
func Check(root string, files ...string) (string, error) {
	dir, err := Dir(root)
	if err != nil {
		return "", err
	}
	script, err := os.ReadFile(filepath.Join(root, "tools", "mermaid", "check.mjs"))
	if err != nil {
		return "", err
	}
	cmd := exec.Command("node", append([]string{"--input-type=module", "-"}, files...)...)
	cmd.Dir = dir // the script's imports resolve from the installed packages
	cmd.Stdin = bytes.NewReader(script)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("mermaid refused a diagram: %w\n%s", err, out)
	}
	return string(out), nil
}

// Library returns the Mermaid library as one browser script
// (dist/mermaid.min.js), from where make mermaid installed it for the
// checkout at root, for inlining into a page that must draw with no
// network.
func Library(root string) ([]byte, error) {
	dir, err := Dir(root)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, "node_modules", "mermaid", "dist", "mermaid.min.js"))
}
