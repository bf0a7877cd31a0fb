package harness

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// debianPython is the interpreter Debian's python3-kubernetes installs
// for; tools/python-client installs the package.
const debianPython = "/usr/bin/python3"

// TestPythonClient races an operator written with the official Python
// client, as a process of its own through the racing proxy: the client
// people use beside client-go, whose watches (?watch=True) racekit must
// read as the API server does. Without the client installed it fails,
// saying how to install it: make test installs it (tools/python-client).
// The CRDs of testdata/python/crds are installed first, as racekit run
// --crds installs them for the README's command.
func TestPythonClient(t *testing.T) {
	out, err := exec.Command(debianPython, "-c", "import kubernetes; print(kubernetes.__version__)").CombinedOutput()
	if err != nil {
		t.Fatalf("this test runs an operator on the official Python client: install it as root with tools/python-client (apt-get install python3-kubernetes): %s: %v\n%s", debianPython, err, out)
	}
	t.Logf("python3-kubernetes %s", strings.TrimSpace(string(out)))
	files, err := filepath.Glob("testdata/python/*.txtar")
	assert.NilError(t, err)
	assert.Assert(t, len(files) > 0)
	crds, err := ReadCRDs("testdata/python/crds")
	assert.NilError(t, err)
	assert.NilError(t, controlPlane(t).InstallCRDs(context.Background(), crds))
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			res := RunFiles(context.Background(), controlPlane(t), ScriptOptions{Files: []string{file}})
			assert.Equal(t, len(res), 1)
			assert.Assert(t, res[0].Passed, "the script failed:\n%s", res[0].Log)
		})
	}
}
