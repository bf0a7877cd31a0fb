package main

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/internal/assets"
)

// noBuild points racekit at an empty folder of control-plane binaries, so
// that racekit envtest or run, reached by mistake, fails at once instead of
// building kube-apiserver and etcd for minutes.
func noBuild(t *testing.T) {
	t.Helper()
	t.Setenv(assets.EnvVar, t.TempDir())
}

// TestHelpFlag checks that -h, -help and --help on every command print that
// command's usage on stdout, and nothing on stderr, and exit 0; and that
// racekit help COMMAND prints the same.
func TestHelpFlag(t *testing.T) {
	noBuild(t)
	for _, name := range commands {
		for _, flag := range []string{"-h", "-help", "--help"} {
			t.Run(name+" "+flag, func(t *testing.T) {
				var stdout, stderr strings.Builder
				assert.Equal(t, run([]string{name, flag}, &stdout, &stderr), exitOK, "stderr: %s", stderr.String())
				assert.Assert(t, strings.HasPrefix(stdout.String(), "usage: racekit "+name), "stdout:\n%s", stdout.String())
				assert.Equal(t, stderr.String(), "")
			})
		}
		if name == "help" {
			continue
		}
		t.Run("help "+name, func(t *testing.T) {
			var viaFlag, viaHelp, stderr strings.Builder
			assert.Equal(t, run([]string{name, "-h"}, &viaFlag, &stderr), exitOK)
			assert.Equal(t, run([]string{"help", name}, &viaHelp, &stderr), exitOK)
			assert.Equal(t, viaHelp.String(), viaFlag.String())
			assert.Equal(t, stderr.String(), "")
		})
	}
}

// TestHelpPointsToCommandHelp checks that racekit help, and the usage a
// mistyped command gets, say how to see a command's own usage.
func TestHelpPointsToCommandHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"nonsense"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr strings.Builder
			run(args, &stdout, &stderr)
			assert.Assert(t, strings.Contains(stdout.String()+stderr.String(), "racekit COMMAND -h"), "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
		})
	}
}

// TestUsageErrors checks that bad arguments are refused with exit code 2
// and a message naming what was wrong, before anything runs: no control
// plane is started and nothing is built.
func TestUsageErrors(t *testing.T) {
	noBuild(t)
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"rnu"}, `racekit: unknown command "rnu" (did you mean "run"?)`},
		{[]string{"help", "controler"}, `racekit help: no help for "controler" (did you mean "controller"?)`},
		{[]string{"help", "scenario", "--html"}, `racekit help: no help for "scenario --html"`},
		{[]string{"envtest", "now"}, `racekit envtest: unexpected argument "now"`},
		{[]string{"envtest", "--force"}, "racekit envtest: flag provided but not defined: -force"},
		{[]string{"explore", "--depth", "3", "a.txtar"}, "racekit explore: bad --depth 3: want 1 or 2"},
		{[]string{"explore", "--shard", "1/0", "a.txtar"}, `racekit explore: bad --shard "1/0": want I/N with 1 ≤ I ≤ N, such as 1/3`},
		{[]string{"run", "--trace", "mermaid", "a.txtar", "b.txtar"}, "racekit run: --trace mermaid draws one diagram, of one scenario: give one FILE, not 2"},
		{[]string{"controller", "--workers=0"}, "racekit controller: --workers must be at least 1, got 0"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr strings.Builder
			assert.Equal(t, run(tc.args, &stdout, &stderr), exitUsage, "stderr: %s", stderr.String())
			assert.Assert(t, strings.HasPrefix(stderr.String(), tc.wantErr+"\n"), "stderr:\n%s", stderr.String())
			assert.Equal(t, stdout.String(), "")
		})
	}
}
