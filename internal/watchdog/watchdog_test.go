package watchdog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
)

// plane is what the helper printed about one of its control planes.
type plane struct {
	root         string
	shell, sleep int
}

// TestWatchdog runs the helper, ends it in each of the ways a process with
// a control plane ends, and checks what its watchdogs leave: after a death
// (SIGKILL, which no handler sees; SIGINT to its process group, as a
// Ctrl-C at the terminal sends it, to a process without a handler; a
// binary go test has deleted), nothing; after Stop(false), nothing; after
// Stop(true), everything, for the caller to stop.
func TestWatchdog(t *testing.T) {
	tests := []struct {
		name    string
		planes  int
		then    string         // what the helper does once ready
		signal  syscall.Signal // sent to the helper's process group once ready
		unlink  bool           // the helper runs from a copy, deleted before it starts a watchdog
		swept   bool           // the watchdogs must have killed and removed everything
		wantOut string
	}{
		{name: "SIGKILL", planes: 1, then: "block", signal: syscall.SIGKILL, swept: true, wantOut: "ended without stopping it; its watchdog killed sh (pid SHELL)"},
		{name: "SIGKILL, two control planes", planes: 2, then: "block", signal: syscall.SIGKILL, swept: true, wantOut: "ended without stopping it"},
		{name: "SIGINT to its group, no handler", planes: 1, then: "block", signal: syscall.SIGINT, swept: true, wantOut: "ended without stopping it"},
		{name: "SIGKILL, deleted binary", planes: 1, then: "block", signal: syscall.SIGKILL, unlink: true, swept: true, wantOut: "ended without stopping it"},
		{name: "Stop(false)", planes: 1, then: "stop-sweep", swept: true, wantOut: "did not stop: its watchdog killed sh (pid SHELL)"},
		{name: "Stop(true)", planes: 2, then: "stop-clean", wantOut: "stopped"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			bin := os.Args[0]
			if tc.unlink {
				bin = copyBinary(t)
			}
			cmd := exec.Command(bin)
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp, helperEnv+"="+strconv.Itoa(tc.planes), helperThen+"="+tc.then)
			if tc.unlink {
				cmd.Env = append(cmd.Env, helperStdin+"=1")
			}
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // as a terminal starts a job
			stdin, err := cmd.StdinPipe()
			assert.NilError(t, err)
			pr, pw, err := os.Pipe()
			assert.NilError(t, err)
			cmd.Stdout, cmd.Stderr = pw, pw
			assert.NilError(t, cmd.Start())
			pw.Close() // the helper and its watchdogs hold it: the end of the output is the end of them all
			defer pr.Close()
			if tc.unlink {
				assert.NilError(t, os.Remove(bin))
				_, err := io.WriteString(stdin, "go\n")
				assert.NilError(t, err)
			}
			out := bufio.NewReader(pr)
			planes, seen := readPlanes(t, out)
			assert.Equal(t, len(planes), tc.planes, "output:\n%s", seen)
			var watches []exitWatch
			for _, p := range planes {
				for _, pid := range []int{p.shell, p.sleep} {
					w := watchExit(t, pid)
					w.what = fmt.Sprintf("the shell standing for the etcd of %s (pid %d)", p.root, pid)
					if pid == p.sleep {
						w.what = fmt.Sprintf("the sleep in that shell's process group (pid %d)", pid)
					}
					t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }) // if the test fails
					watches = append(watches, w)
				}
			}
			if tc.signal != 0 {
				assert.NilError(t, syscall.Kill(-cmd.Process.Pid, tc.signal))
			}
			rest, _ := io.ReadAll(out) // until the helper and its watchdogs have exited
			seen += string(rest)
			werr := cmd.Wait()
			for _, p := range planes {
				seen = strings.ReplaceAll(seen, fmt.Sprintf("sh (pid %d)", p.shell), "sh (pid SHELL)")
			}
			if tc.signal != 0 {
				var exit *exec.ExitError
				assert.Assert(t, errors.As(werr, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == tc.signal, "the helper ended with %v, want %v", werr, tc.signal)
			} else {
				assert.NilError(t, werr, "output:\n%s", seen)
			}

			for _, w := range watches {
				if tc.swept {
					// A guard against a survivor, not a speed target.
					assert.Assert(t, w.wait(t, 10*time.Second), "%s still runs 10s after the helper ended (%v); its watchdog should have killed it; output:\n%s", w.what, werr, seen)
				} else {
					assert.Assert(t, !w.wait(t, 0), "%s has exited after %s; the watchdog must leave it to the caller; output:\n%s", w.what, tc.name, seen)
				}
			}
			left, err := os.ReadDir(tmp)
			assert.NilError(t, err)
			if tc.swept {
				assert.Assert(t, len(left) == 0, "left in TMPDIR: %v; output:\n%s", names(left), seen)
			}
			assert.Assert(t, strings.Contains(seen, tc.wantOut), "want %q in the output:\n%s", tc.wantOut, seen)
			if tc.swept {
				assert.Assert(t, !strings.Contains(seen, Name+":"), "the watchdog reported an error:\n%s", seen)
				return
			}
			// Stop(true) says the caller has removed everything; the
			// watchdog touched nothing.
			assert.Equal(t, len(left), 2*tc.planes, "want each root and its serving-certificate folder left in TMPDIR, got %v", names(left))
			assert.Assert(t, !strings.Contains(seen, "racekit:"), "the watchdog reported a sweep after Stop(true):\n%s", seen)
		})
	}
}

// readPlanes reads the helper's output until "ready" and returns the
// control planes it printed, and the output.
func readPlanes(t *testing.T, r *bufio.Reader) ([]plane, string) {
	t.Helper()
	var planes []plane
	var seen strings.Builder
	for {
		line, err := r.ReadString('\n')
		seen.WriteString(line)
		if strings.TrimSpace(line) == "ready" {
			return planes, seen.String()
		}
		if err != nil {
			t.Fatalf("the helper's output ended before \"ready\":\n%s", seen.String())
		}
		var p plane
		if _, err := fmt.Sscanf(line, "plane %s %d %d", &p.root, &p.shell, &p.sleep); err == nil {
			planes = append(planes, p)
		}
	}
}

// copyBinary copies this test binary into a folder of its own and returns
// the copy's path.
func copyBinary(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(os.Args[0])
	assert.NilError(t, err)
	bin := filepath.Join(t.TempDir(), "watchdog.test")
	assert.NilError(t, os.WriteFile(bin, b, 0o700))
	return bin
}

func names(entries []os.DirEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// exitWatch is a pidfd on a process that is not this one's child, which
// becomes readable when it exits.
type exitWatch struct {
	pid, fd int
	what    string // the process, for messages
}

func watchExit(t *testing.T, pid int) exitWatch {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	assert.NilError(t, err, "pidfd_open %d", pid)
	t.Cleanup(func() { syscall.Close(fd) })
	return exitWatch{pid: pid, fd: fd, what: fmt.Sprintf("pid %d", pid)}
}

// wait reports whether the process exits within d; with d 0, whether it
// has exited.
func (w exitWatch) wait(t *testing.T, d time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(max(time.Until(deadline), 0).Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		assert.NilError(t, err)
		return n > 0
	}
}

// TestStartFails checks that a watchdog that cannot make its folder says
// why, and exits.
func TestStartFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	w, err := Start(dir, helperPrefix)
	assert.Assert(t, w == nil)
	assert.ErrorContains(t, err, "the control plane's watchdog made no folder in "+dir+": ")
	assert.ErrorContains(t, err, dir+": no such file or directory")
}

// TestNamesRoot checks which command lines name a path in a root: only
// the root and paths inside it, as an argument or a flag's value.
func TestNamesRoot(t *testing.T) {
	const root = "/tmp/racekit-controlplane-1"
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"etcd", "--data-dir=" + root + "/etcd"}, true},
		{[]string{"kube-apiserver", "--cert-dir", root + "/kube-apiserver"}, true},
		{[]string{"rm", "-rf", root}, true},
		{[]string{"etcd", "--data-dir=" + root + "0/etcd"}, false}, // another root
		{[]string{"ls", "/tmp"}, false},
		{[]string{"grep", "x" + root}, false},
		{nil, false}, // a zombie
	}
	for _, tc := range tests {
		assert.Equal(t, namesRoot(tc.args, root), tc.want, "%q", tc.args)
	}
}

// BenchmarkStart measures what a watchdog adds to a control plane's start
// and stop: it runs this binary again, which makes the root.
func BenchmarkStart(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		w, err := Start(dir, helperPrefix)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.Remove(w.Root()); err != nil {
			b.Fatal(err)
		}
		if err := w.Stop(true); err != nil {
			b.Fatal(err)
		}
	}
}
