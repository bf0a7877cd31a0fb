package racekit_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/assert/cmp"
)

// TestFreshModule uses racekit as a project would: from a module of its
// own, which imports github.com/racekit/racekit (replaced by this checkout)
// and nothing else of ours. The module, in testdata/freshmodule/module, has
// a Counter CRD, its Go types, a reconciler that adds one to spec.value
// inside retry.RetryOnConflict, the ten-line test file that races it, and one
// scenario: bob annotates the Counter right after the controller's GET, so
// the controller's update gets a real 409.
//
// The test runs go test in that module twice: once as it is, which
// must pass, and once with testdata/freshmodule/reconciler_stale_get.go in
// place of the reconciler, whose GET is outside the retry. That one must
// fail, and its failure must name the rule it broke: stale object.
//
// Warm, after make test has filled the build cache with the race build of
// racekit's dependencies, it takes 35 s on 2 CPUs (48 s with other tests
// loading them): go mod tidy under 1 s, then each go test run 16 to 19 s,
// about 8 s to build and link the test binary and 9 s to run it, most of
// that starting its control plane. Cold, the first run also compiles every
// dependency with -race, which takes minutes.
func TestFreshModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own and runs its tests twice, each on a control plane of its own")
	}
	root, err := filepath.Abs(".")
	assert.NilError(t, err)
	dir := t.TempDir()
	assert.NilError(t, os.CopyFS(dir, os.DirFS("testdata/freshmodule/module")))
	goLine, err := goDirective(filepath.Join(root, "go.mod"))
	assert.NilError(t, err)
	mod := fmt.Sprintf("module example.com/counter\n\n%s\n\nrequire github.com/racekit/racekit v0.0.0\n\nreplace github.com/racekit/racekit => %s\n", goLine, root)
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644))
	// racekit's go.sum has every sum the module needs, so that go mod tidy
	// finds them all in the module cache, with no download.
	sums, err := os.ReadFile(filepath.Join(root, "go.sum"))
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644))

	ctx := t.Context()
	if deadline, ok := t.Deadline(); ok {
		// Leave time to stop a child that overruns, and to report it.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-30*time.Second))
		defer cancel()
	}

	out, err := goCommand(ctx, t, dir, "mod", "tidy")
	assert.NilError(t, err, "go mod tidy in the fresh module:\n%s", out)

	// The reconciler as it should be: every attempt reads the Counter again.
	out, err = goCommand(ctx, t, dir, "test", "-race", "-count=1", "-v", "./...")
	assert.NilError(t, err, "go test in the fresh module, with the GET inside the retry:\n%s", out)
	assert.Check(t, cmp.Contains(out, "--- PASS: TestRaces/counter_conflict"), "the scenario did not run:\n%s", out)

	// The GET moved out of the retry: each retry sends the stale copy again.
	stale, err := os.ReadFile("testdata/freshmodule/reconciler_stale_get.go")
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "reconciler.go"), stale, 0o644))
	out, err = goCommand(ctx, t, dir, "test", "-race", "-count=1", "-v", "./...")
	assert.Assert(t, err != nil, "go test in the fresh module passed with the GET outside the retry:\n%s", out)
	assert.Check(t, cmp.Contains(out, "--- FAIL: TestRaces/counter_conflict"), "the scenario did not fail:\n%s", out)
	assert.Check(t, cmp.Contains(out, "counter_conflict.txtar:18: reconcile counters/c: add one to counter "),
		"the scenario did not fail at its reconcile:\n%s", out)
	assert.Check(t, cmp.Contains(out, "rule broken: #5 update counters/c re-sent rv1, which #4 was refused for"),
		"the failure does not name the stale update:\n%s", out)
	assert.Check(t, cmp.Contains(out, "(stale object); and 3 more times"), "the failure does not name the rule:\n%s", out)
}

// goDirective returns the go line of the go.mod file at path, such as
// "go 1.26.0".
func goDirective(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if line := strings.TrimSpace(s.Text()); strings.HasPrefix(line, "go ") {
			return line, nil
		}
	}
	if err := s.Err(); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return "", fmt.Errorf("%s has no go line", path)
}

// goCommand runs the go command with args in dir and returns its
// output, stdout and stderr together. It runs in a process group of its
// own; when ctx ends, the group gets an interrupt, as from a terminal, so
// that the test binary stops its control plane before it exits, and the
// test fails.
func goCommand(ctx context.Context, t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		// The module cache and racekit's go.sum hold almost everything;
		// on a first run with an empty module cache, go mod tidy fetches
		// the rest (modules of the whole graph that racekit's own build
		// never needed) from the configured proxy, as make test's other
		// stages do. The checksum database is left out: the proxy and
		// racekit's go.sum vouch for what is fetched.
		"GOSUMDB=off", "GOWORK=off",
		"GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = 20 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("go %s: %v", strings.Join(args, " "), time.Since(start).Round(100*time.Millisecond))
	if ctx.Err() != nil {
		t.Fatalf("go %s: stopped at the test's deadline (%v):\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), err
}
