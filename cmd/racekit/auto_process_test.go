package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/internal/assets"
)

// TestAutoProcess runs racekit explore, a process, over
// testdata/auto/webapp_process.txtar: explore auto of racekit controller,
// the production binary, spawned as a process of its own, with no hint.
// It must exit 0 with no plan failed, every run settled by the process's
// workqueue (no "quiet period" line), and plans of the intermediate and
// stale classes run.
func TestAutoProcess(t *testing.T) {
	if _, err := assets.Find(); err != nil {
		t.Fatalf("%v", err) // racekit would build them, for minutes
	}
	built(t)
	cmd := exec.Command(bins.racekit, "explore", "testdata/auto/webapp_process.txtar")
	// The scenario spawns racekit controller by name.
	cmd.Env = append(os.Environ(), "PATH="+bins.dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := stdout.String()
	assert.NilError(t, err, "stdout:\n%s\nstderr:\n%s", out, stderr.String())
	assert.Assert(t, strings.Contains(out, " 0 failed\n"), "stdout:\n%s", out)
	for _, want := range []string{"  auto: 2 reference runs; ", " intermediate, ", " stale"} {
		assert.Assert(t, strings.Contains(out, want), "no %q in stdout:\n%s", want, out)
	}
	assert.Assert(t, !strings.Contains(out, "quiet period"), "stdout:\n%s", out)
	t.Log(out)
}
