package running

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/controllers"
	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/semantics"
	"github.com/racekit/racekit/internal/assets"
)

// kcmLanguage returns the options the controller-manager scenarios in
// files run with: the API-semantics commands (delete with a propagation policy), the
// controllers' (adopt's owner, none registered) and this package's.
func kcmLanguage(files ...string) language.Options {
	return language.Options{Files: files, Extensions: []*language.Extension{
		semantics.Extension(), controllers.Extension(nil, nil), Extension(),
	}}
}

// TestControllerManager runs the scenarios of testdata/kcm, which run
// kube-controller-manager's garbage collector and StatefulSet controller
// through the racing proxy: a script with a want section must fail, at a
// line and with a message its regular expression matches; one without must
// pass.
//
// kube-controller-manager lists and watches every namespace, and the
// garbage collector would act on any other test's objects that have an
// owner no more, so these scenarios run alone: one at a time, in a test
// that is not parallel, on this package's own control plane, which no other
// package's tests share.
func TestControllerManager(t *testing.T) {
	if _, err := assets.FindControllerManager(); err != nil {
		t.Fatalf("these tests race kube-controller-manager: %v", err)
	}
	files, err := filepath.Glob("testdata/kcm/*.txtar")
	assert.NilError(t, err)
	assert.Assert(t, len(files) > 0)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			assert.NilError(t, err)
			_, want, hasWant := strings.Cut(string(data), "\n-- want --\n")
			res := language.RunFiles(context.Background(), controlPlane(t), kcmLanguage(file))
			assert.Equal(t, len(res), 1)
			out := res[0].Log
			if !hasWant {
				assert.Assert(t, res[0].Passed, "the script failed:\n%s", out)
				return
			}
			want = strings.TrimSpace(want)
			assert.Assert(t, !res[0].Passed, "the script passed, but it must fail; output:\n%s", out)
			assert.Assert(t, regexp.MustCompile(want).MatchString(out), "output does not match %q:\n%s", want, out)
		})
	}
}

// TestControllerManagerMissing checks what controller-manager says when
// kube-controller-manager has not been built: where, and what to run.
func TestControllerManagerMissing(t *testing.T) {
	find := findControllerManager
	defer func() { findControllerManager = find }()
	findControllerManager = func() (string, error) {
		return "", fmt.Errorf("%w: kube-controller-manager is in none of [/nowhere]: run `make controller-manager` to build it", assets.ErrMissing)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "kcm_missing.txtar")
	assert.NilError(t, os.WriteFile(file, []byte("# no binary\ncontroller-manager\n"), 0o644))
	res := language.RunFiles(context.Background(), controlPlane(t), kcmLanguage(file))
	assert.Equal(t, len(res), 1)
	assert.Assert(t, !res[0].Passed)
	want := "kcm_missing.txtar:2: controller-manager: control-plane binaries not found: kube-controller-manager is in none of [/nowhere]: run `make controller-manager` to build it"
	assert.Assert(t, strings.Contains(res[0].Log, want), "want %q in:\n%s", want, res[0].Log)
}
