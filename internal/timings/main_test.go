package main

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// TestReportFailures checks that make timings shows what failed: a failed
// subtest's own output, not its parent's, and a package that failed with
// no failed test (here its TestMain), and nothing of what passed.
func TestReportFailures(t *testing.T) {
	const run = `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"fine\n"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":1}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"run","Package":"p","Test":"TestB/sub"}
{"Action":"output","Package":"p","Test":"TestB/sub","Output":"    b_test.go:9: want 2, got 3\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"--- FAIL: TestB (2.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestB/sub","Elapsed":2}
{"Action":"fail","Package":"p","Test":"TestB","Elapsed":2}
{"Action":"fail","Package":"p","Elapsed":3}
{"Action":"output","Package":"q","Output":"main_test.go:20: start the control plane: no luck\n"}
{"Action":"fail","Package":"q","Elapsed":1}
{"Action":"pass","Package":"r","Elapsed":1}
`
	tests, pkgs, err := read(strings.NewReader(run))
	assert.NilError(t, err)
	var b strings.Builder
	n := reportFailures(&b, tests, pkgs)
	assert.Equal(t, n, 2)
	assert.Equal(t, b.String(), `--- p TestB/sub failed:
        b_test.go:9: want 2, got 3
--- q failed:
    main_test.go:20: start the control plane: no luck
`)
}

// TestReportFailuresNone: a run that passed reports no failure.
func TestReportFailuresNone(t *testing.T) {
	tests, pkgs, err := read(strings.NewReader(`{"Action":"pass","Package":"r","Test":"TestA","Elapsed":1}
{"Action":"pass","Package":"r","Elapsed":1}
`))
	assert.NilError(t, err)
	var b strings.Builder
	assert.Equal(t, reportFailures(&b, tests, pkgs), 0)
	assert.Equal(t, b.String(), "")
}
