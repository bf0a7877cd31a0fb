package harness

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/racekit/racekit/harness/language"

	"github.com/rogpeppe/go-internal/txtar"
)

// FuzzScript drives the scenario engine, the argument handling of every
// command and the hook trigger parser with arbitrary scripts against the
// real control plane. Whatever the script, the harness must report a pass
// or a failure: never panic, never hang (hook actions are bounded by the
// hook timeout, commands by the API server's answers).
//
// Lines that would run a testscript builtin (exec, rm, cd, ...) or
// racekit's spawn are dropped, so that a fuzzed script can only reach
// racekit's own commands and cannot touch the machine.
//
// $RACEKIT_FUZZ_SEEDS=N seeds the corpus with the first N files alone: for
// cmd/racekit's leak tests, whose subject is how a fuzzing run ends, not
// what it finds (each seed is a scenario run before any fuzzing).
func FuzzScript(f *testing.F) {
	limit := -1
	if v := os.Getenv("RACEKIT_FUZZ_SEEDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			f.Fatalf("RACEKIT_FUZZ_SEEDS=%s: want a number of seeds, at least 1", v)
		}
		limit = n
	}
	for _, pattern := range []string{"../scenarios/*.txtar", "../testdata/bad/*.txtar", "../testdata/false/*.txtar"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			if limit == 0 {
				break
			}
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(string(data))
			limit--
		}
	}
	f.Fuzz(func(t *testing.T, script string) {
		if os.Getenv("RACEKIT_FUZZ_CRASH") == "1" {
			// For cmd/racekit's leak tests: a worker that dies the way a
			// crash does, without its cleanup.
			os.Exit(3)
		}
		if err := language.CheckArchive("fuzz.txtar", []byte(script)); err != nil {
			// RunFiles refuses it the same way; txtar.Parse, used below to
			// filter the script, would panic on it.
			c, opts := withRef(t, writeScript(t, script))
			res := RunFiles(context.Background(), c, opts)
			if len(res) != 1 || res[0].Passed || !strings.Contains(res[0].Log, "malformed file marker") {
				t.Fatalf("a malformed archive was not refused: %+v", res)
			}
			return
		}
		ar := txtar.Parse([]byte(script))
		c, opts := withRef(t)
		ar.Comment = []byte(onlyOurCommands(string(ar.Comment), Commands(opts.Commands...)))
		file := filepath.Join(t.TempDir(), "fuzz.txtar")
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		opts.Files = []string{file}
		// Go's fuzzing worker takes an input that runs for 10 s as hung
		// and dies ("deadlocked!"), leaving its control plane behind. A
		// script may wait on purpose (next waits 10 s for a watch event
		// that a mutated script never causes), so each input ends at 5 s;
		// a command that ignores the context still shows up as a hang.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		opts.HookTimeout = 2 * time.Second
		res := RunFiles(ctx, c, opts)
		if len(res) != 1 {
			t.Fatalf("want one result, got %d", len(res))
		}
		if strings.Contains(res[0].Log, "panic:") {
			t.Fatalf("a command panicked:\n%s", res[0].Log)
		}
	})
}

// onlyOurCommands drops the script lines whose command is not one of cmds,
// keeping comments and blank lines.
func onlyOurCommands(script string, cmds []*Command) string {
	ours := map[string]bool{}
	for _, c := range cmds {
		ours[c.Name] = true
	}
	var keep []string
	for _, line := range strings.Split(script, "\n") {
		f := strings.Fields(line)
		for len(f) > 0 && (f[0] == "!" || strings.HasPrefix(f[0], "[")) {
			f = f[1:]
		}
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			keep = append(keep, line)
			continue
		}
		// spawn runs any program: a fuzzer must not.
		if ours[f[0]] && !strings.HasPrefix(f[0], "test-") && f[0] != "spawn" {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

func writeScript(t *testing.T, script string) string {
	file := filepath.Join(t.TempDir(), "fuzz.txtar")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}
