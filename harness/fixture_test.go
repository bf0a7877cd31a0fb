package harness

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
)

// webAppScript writes a scenario file named name: script, followed by the
// archive file webapp.yaml with a one-replica WebApp called web.
func webAppScript(t *testing.T, name, script string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	assert.NilError(t, os.WriteFile(file, []byte(script+`-- webapp.yaml --
apiVersion: demo.racekit.dev/v1alpha1
kind: WebApp
metadata:
  name: web
spec:
  replicas: 1
  image: nginx
`), 0o644))
	return file
}
