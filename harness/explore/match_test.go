package explore

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// selectorNames are the full names of leaf tests the selector tests
// select among: two explorations' runs, and a test without subtests.
var selectorNames = []string{
	"TestP/aa/before_x", "TestP/aa/after_x", "TestP/aa/after_y_2nd",
	"TestP/zz/before_x", "TestP/zz/after_x", "TestP/zz/after_y_2nd",
	"TestP/a_b/before_x", "TestQ",
}

// selectorCases are -run and -skip patterns and the leaves of
// selectorNames go test runs with them.
var selectorCases = []struct {
	run, skip string
	want      []string
}{
	{"", "", selectorNames},
	{"TestP", "", selectorNames[:7]},
	{"TestP/aa", "", selectorNames[:3]},
	{"TestP/aa/after_x$", "", []string{"TestP/aa/after_x"}},
	// The case: a top-level alternation selects every run of zz.
	{"TestP/aa/before_x|TestP/zz$", "", []string{"TestP/aa/before_x", "TestP/zz/before_x", "TestP/zz/after_x", "TestP/zz/after_y_2nd"}},
	{"TestQ|TestP/zz/after", "", []string{"TestP/zz/after_x", "TestP/zz/after_y_2nd", "TestQ"}},
	{"TestP/(aa|zz)/before", "", []string{"TestP/aa/before_x", "TestP/zz/before_x"}},
	{"TestP/a[/_]b", "", []string{"TestP/a_b/before_x"}},
	{"TestP/[az]{2}/after_(x|y_2nd)$", "", []string{"TestP/aa/after_x", "TestP/aa/after_y_2nd", "TestP/zz/after_x", "TestP/zz/after_y_2nd"}},
	{"TestP//before", "", []string{"TestP/aa/before_x", "TestP/zz/before_x", "TestP/a_b/before_x"}},
	{"", "TestP/aa", []string{"TestP/zz/before_x", "TestP/zz/after_x", "TestP/zz/after_y_2nd", "TestP/a_b/before_x", "TestQ"}},
	{"TestP/zz", "TestP/zz/after|TestQ", []string{"TestP/zz/before_x"}},
	// A -skip with more levels than the test waits for a subtest it
	// matches whole: TestQ has none, so it runs.
	{"", "TestQ/x", selectorNames},
}

// TestTestSelector checks that an explore line selects its runs as go test
// -run and -skip select subtests.
func TestTestSelector(t *testing.T) {
	for _, tc := range selectorCases {
		t.Run(tc.run+" -skip "+tc.skip, func(t *testing.T) {
			sel := testSelector(tc.run, tc.skip)
			var got []string
			for _, n := range selectorNames {
				if sel(n) {
					got = append(got, n)
				}
			}
			assert.DeepEqual(t, got, tc.want)
		})
	}
}

// TestTestSelectorAgreesWithGoTest runs a test binary whose subtests are
// selectorNames with each pattern, and requires that the leaves it runs
// are the ones the selector selects: package testing itself is the truth.
func TestTestSelectorAgreesWithGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test binary; skipped with -short")
	}
	dir := t.TempDir()
	src := `package p

import "testing"

func TestP(t *testing.T) {
	for _, e := range []string{"aa", "zz", "a_b"} {
		t.Run(e, func(t *testing.T) {
			for _, r := range []string{"before_x", "after_x", "after_y_2nd"} {
				if e == "a_b" && r != "before_x" {
					continue
				}
				t.Run(r, func(t *testing.T) {})
			}
		})
	}
}

func TestQ(t *testing.T) {}
`
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module p\n\ngo 1.26\n"), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "p_test.go"), []byte(src), 0o644))
	bin := filepath.Join(dir, "p.test")
	build := exec.Command("go", "test", "-c", "-o", bin, ".")
	build.Dir = dir
	out, err := build.CombinedOutput()
	assert.NilError(t, err, "%s", out)
	for _, tc := range selectorCases {
		t.Run(tc.run+" -skip "+tc.skip, func(t *testing.T) {
			args := []string{"-test.v", "-test.run=" + tc.run}
			if tc.skip != "" {
				args = append(args, "-test.skip="+tc.skip)
			}
			out, err := exec.Command(bin, args...).CombinedOutput()
			assert.NilError(t, err, "%s", out)
			var ran []string
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				if name, ok := strings.CutPrefix(sc.Text(), "=== RUN   "); ok && slices.Contains(selectorNames, name) {
					ran = append(ran, name)
				}
			}
			sel := testSelector(tc.run, tc.skip)
			var got []string
			for _, n := range selectorNames {
				if sel(n) {
					got = append(got, n)
				}
			}
			assert.DeepEqual(t, got, ran)
		})
	}
}
