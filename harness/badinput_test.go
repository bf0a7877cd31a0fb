package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"
	"gotest.tools/v3/assert"
)

// TestBadInput runs each script under testdata/bad, all of which must fail,
// and checks that the failure names file:line and says what was expected:
// the script's "want" section is a regular expression the output must match.
func TestBadInput(t *testing.T) {
	files, err := filepath.Glob("../testdata/bad/*.txtar")
	assert.NilError(t, err)
	assert.Assert(t, len(files) > 0)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(file)
			assert.NilError(t, err)
			var want string
			for _, f := range ar.Files {
				if f.Name == "want" {
					want = strings.TrimSpace(string(f.Data))
				}
			}
			assert.Assert(t, want != "", "%s has no want section", file)

			rt := &recordingT{}
			testscript.RunT(rt, Params(context.Background(), cp, ScriptOptions{Files: []string{file}}))
			out := rt.output()
			assert.Assert(t, rt.failed, "the script passed, but it must fail; output:\n%s", out)
			assert.Assert(t, regexp.MustCompile(want).MatchString(out), "output does not match %q:\n%s", want, out)
		})
	}
}

// recordingT is a testscript.T that keeps the output and the failure, so a
// test can check how a script fails.
type recordingT struct {
	mu     sync.Mutex
	log    strings.Builder
	failed bool
}

func (t *recordingT) Log(args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintln(&t.log, args...)
}

func (t *recordingT) Error(args ...any) {
	t.Log(args...)
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
}

func (t *recordingT) Fatal(args ...any) {
	t.Error(args...)
	runtime.Goexit()
}

func (t *recordingT) FailNow() {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
	runtime.Goexit()
}

func (t *recordingT) Skip(args ...any) {
	t.Error(append([]any{"skipped, which a bad-input script must never be:"}, args...)...)
	runtime.Goexit()
}

func (t *recordingT) Parallel()     {}
func (t *recordingT) Verbose() bool { return false }

// Run runs f on its own goroutine, so that FailNow ends f and not the caller.
func (t *recordingT) Run(name string, f func(testscript.T)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(t)
	}()
	<-done
}

func (t *recordingT) output() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.log.String()
}
