package gotestjson

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// TestVerdicts keeps each test's last verdict and its output, by package
// and name, and passes over lines that are not JSON.
func TestVerdicts(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"FAIL: a.txtar:3\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestA"}`,
		`# p [build failed]`,
		`{"Action":"run","Package":"p","Test":"TestA/x"}`,
		`{"Action":"skip","Package":"p","Test":"TestA/x"}`,
		`{"Action":"pass","Package":"p","Test":"TestB"}`,
		`{"Action":"fail","Package":"p"}`,
	}, "\n")
	verdicts, outputs := map[string]string{}, map[string][]string{}
	assert.NilError(t, Verdicts(strings.NewReader(in), verdicts, outputs))
	assert.DeepEqual(t, verdicts, map[string]string{"p TestA": "fail", "p TestA/x": "skip", "p TestB": "pass", "p": "fail"})
	assert.DeepEqual(t, outputs, map[string][]string{"p TestA": {"FAIL: a.txtar:3\n"}})
}
