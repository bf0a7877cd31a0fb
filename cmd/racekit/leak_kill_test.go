package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
)

// TestNoLeaksKilled kills the harness's test binary, and racekit run, with
// SIGKILL, which no handler sees, once the control plane serves and while
// it starts (etcd has made its data folder, the API server does not serve
// yet), and checks that the control plane's watchdog leaves nothing: no
// process whose command line names the killed process's TMPDIR, nothing in
// it. The watchdog holds the killed process's stderr, so the end of the
// output is the end of the watchdog, which waits for what it kills: the
// test looks once, then, without a poll.
func TestNoLeaksKilled(t *testing.T) {
	built(t)
	target := []string{"-test.run", "TestSignalTarget$", "-test.v"}
	targetEnv := []string{"RACEKIT_SIGNAL_TARGET=1"}
	tests := []struct {
		name    string
		bin     string
		dir     string
		env     []string
		args    []string
		killAt  string   // ready: once the output says so; etcd: once etcd has made ROOT/etcd/member
		running []string // what must run when it is killed
	}{
		{name: "go test, control plane serving", bin: bins.harnessTest, dir: "../../harness", env: targetEnv, args: target, killAt: "ready", running: []string{"etcd", "kube-apiserver"}},
		{name: "go test, etcd starting", bin: bins.harnessTest, dir: "../../harness", env: targetEnv, args: target, killAt: "etcd", running: []string{"etcd"}},
		{name: "racekit run, etcd starting", bin: bins.racekit, args: []string{"run"}, killAt: "etcd", running: []string{"etcd"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			started := time.Now()
			cmd, out, tmp := start(t, tc.bin, tc.dir, tc.env, tc.args...)
			guard := guardHang(cmd, tmp, 3*time.Minute)
			defer guard.stop()
			// What a failed run leaves, killed before tmp is removed
			// (cleanups run last first).
			t.Cleanup(func() { endOrphans(running(tmp)) })
			var seen string
			if tc.killAt == "ready" {
				seen = readUntil(t, out, "ready")
			}
			var rest strings.Builder
			exited := make(chan struct{})
			go func() {
				defer close(exited)
				io.Copy(&rest, out) // until the process and its watchdog have exited
			}()
			if tc.killAt == "etcd" {
				if _, err := awaitPath(tmp, exited, "racekit-controlplane-*", "etcd", "member"); err != nil {
					<-exited
					guard.fatalIfFired(t, cmd, started, rest.String())
					t.Fatalf("etcd never made its data folder: %v\n%s ended (%s); output:\n%s", err, tc.bin, status(cmd), rest.String())
				}
			}
			procs := running(tmp)
			for _, name := range tc.running {
				assert.Assert(t, slices.ContainsFunc(procs, isCommand(name)), "%s must run when the process is killed, or the test proves nothing; running:\n%s", name, strings.Join(procs, "\n"))
			}
			assert.NilError(t, cmd.Process.Signal(syscall.SIGKILL))
			<-exited
			seen += rest.String()
			guard.fatalIfFired(t, cmd, started, seen)
			assert.Equal(t, status(cmd), "signal: killed", "output:\n%s", seen)
			procs, files := leftovers(t, tmp)
			assert.Assert(t, len(procs) == 0, "processes left running once the killed process's output ended:\n%s\noutput:\n%s", strings.Join(procs, "\n"), seen)
			assert.Assert(t, len(files) == 0, "left in TMPDIR: %v\noutput:\n%s", files, seen)
			// An etcd still starting may have died already, of SIGPIPE,
			// writing to the pipe to its parent: the watchdog then kills
			// nothing, and removes the folder all the same.
			for _, report := range []string{"ended without stopping it; its watchdog ", ", and removed the folder"} {
				assert.Assert(t, strings.Contains(seen, report), "want the watchdog's report (%q) in the output:\n%s", report, seen)
			}
		})
	}
}

// isCommand returns a match for what running returns, for a process whose
// program is called name.
func isCommand(name string) func(proc string) bool {
	return func(proc string) bool {
		_, cmdline, _ := strings.Cut(proc, ": ")
		prog, _, _ := strings.Cut(cmdline, " ")
		return filepath.Base(prog) == name
	}
}

// awaitPath returns the path below dir whose elements match patterns, one
// each, once it exists. inotify wakes it as each element is made, so it
// waits for a folder another process makes without a poll. It fails if
// gone is closed first.
func awaitPath(dir string, gone <-chan struct{}, patterns ...string) (string, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return "", fmt.Errorf("inotify: %w", err)
	}
	f := os.NewFile(uintptr(fd), "inotify") // non-blocking: a read waits in Go's poller
	defer f.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-gone:
			_ = f.SetReadDeadline(time.Now())
		case <-done:
		}
	}()
	buf := make([]byte, 64<<10)
	for _, pattern := range patterns {
		if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
			return "", fmt.Errorf("watch %s: %w", dir, err)
		}
		for {
			// Looked for once the watch is on, so that nothing made
			// meanwhile escapes both.
			if m, _ := filepath.Glob(filepath.Join(dir, pattern)); len(m) > 0 {
				dir = m[0]
				break
			}
			if _, err := f.Read(buf); err != nil {
				return "", fmt.Errorf("wait for %s in %s: %w", pattern, dir, err)
			}
		}
	}
	return dir, nil
}
