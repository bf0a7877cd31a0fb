package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// TestNoLeaksSpawned runs racekit run on scenarios that spawn racekit
// controller, which runs until it gets SIGTERM, and the harness's tree
// child, whose daemon double forked into a session of its own and, with
// its child in another process group, ignores SIGTERM; and checks that no
// process a scenario spawned, nor any it started, outlives racekit: when
// the scenario halts them, when the scenario's end halts them, when the
// scenario fails while they run, when racekit gets SIGINT while they run,
// and when racekit is killed outright (each spawn's reaper kills its tree
// when racekit is gone; the control plane's watchdog ends kube-apiserver
// and etcd). A scenario gives each process it spawns the environment
// variable RACEKIT_LEAK_MARK=$WORK, a folder in racekit's TMPDIR, which
// every process it starts inherits and /proc/PID/environ shows.
func TestNoLeaksSpawned(t *testing.T) {
	built(t)
	tests := []struct {
		name   string
		script string // in testdata/leak
		// signal, if set, goes to racekit once the scenario has opened
		// the gate: its controller then runs and has made a call.
		signal     syscall.Signal
		wantOut    string
		wantStatus string
	}{
		{name: "halted", script: "spawn_halted.txtar", wantOut: "PASS spawn_halted", wantStatus: "exit status 0"},
		{name: "not halted", script: "spawn_not_halted.txtar", wantOut: "PASS spawn_not_halted", wantStatus: "exit status 0"},
		{name: "scenario fails", script: "spawn_fails.txtar", wantOut: "FAIL spawn_fails", wantStatus: "exit status 1"},
		{name: "SIGINT to racekit run", script: "spawn_waits.txtar", signal: syscall.SIGINT, wantOut: "stopping the control plane", wantStatus: "signal: interrupt"},
		// Killed outright, racekit stops nothing: each spawn's reaper
		// sees the end of racekit's pipe and kills its tree, and the
		// control plane's watchdog kube-apiserver and etcd.
		{name: "SIGKILL to racekit run", script: "spawn_waits.txtar", signal: syscall.SIGKILL, wantStatus: "signal: killed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// spawn ... -- racekit runs this racekit, which racekit run
			// puts first on PATH; the tree is the harness's test binary.
			env := []string{"RACEKIT_LEAK_HARNESS=" + bins.harnessTest}
			var gate *os.File
			if tc.signal != 0 {
				// The scenario writes a line to this pipe once its
				// controller has made a call. Opened for reading and
				// writing, it opens at once, and never reads EOF.
				fifo := filepath.Join(t.TempDir(), "gate")
				assert.NilError(t, syscall.Mkfifo(fifo, 0o600))
				var err error
				gate, err = os.OpenFile(fifo, os.O_RDWR, 0)
				assert.NilError(t, err)
				defer gate.Close() // ends the read below, if nothing was written
				env = append(env, "RACEKIT_LEAK_GATE="+fifo)
			}
			started := time.Now()
			cmd, out, tmp := start(t, bins.racekit, "", env, "run", filepath.Join("testdata", "leak", tc.script))
			guard := guardHang(cmd, tmp, 3*time.Minute)
			defer guard.stop()
			work, err := filepath.EvalSymlinks(tmp) // as testscript makes $WORK
			assert.NilError(t, err)
			mark := "RACEKIT_LEAK_MARK=" + work + string(filepath.Separator)
			// A failed test may leave processes running. Cleanups run
			// last first: this one before the removal of tmp.
			t.Cleanup(func() { endOrphans(append(running(tmp), marked(mark)...)) })
			var output strings.Builder
			exited := make(chan struct{})
			go func() {
				defer close(exited)
				io.Copy(&output, out) // until the process has exited
			}()

			var children []exitWatch
			if gate != nil {
				opened := make(chan error, 1)
				go func() {
					_, err := bufio.NewReader(gate).ReadString('\n')
					opened <- err
				}()
				select {
				case err := <-opened:
					assert.NilError(t, err, "read the gate")
				case <-exited:
					guard.fatalIfFired(t, cmd, started, output.String())
					t.Fatalf("racekit run ended (%s) before the scenario opened the gate:\n%s", status(cmd), output.String())
				}
				// The controller, the tree and the sleeper run (with
				// their reapers): note how to see them exit, before
				// racekit's end can take them.
				procs := marked(mark)
				for _, want := range []string{"racekit controller", "sleep 600", treeChildEnv + "=tree-daemon", treeChildEnv + "=tree-leaf"} {
					assert.Assert(t, slices.ContainsFunc(procs, func(p string) bool { return strings.Contains(p, want) || slices.Contains(environ(p), want) }),
						"the scenario opened the gate, so a process with %q runs with %s; running are:\n%s", want, mark, strings.Join(procs, "\n"))
				}
				for _, p := range procs {
					w, err := watchExit(p)
					assert.NilError(t, err)
					defer w.close()
					children = append(children, w)
				}
				assert.NilError(t, cmd.Process.Signal(tc.signal))
			}
			<-exited // the end of racekit's output, and of its watchdog's, which holds it
			seen := output.String()
			guard.fatalIfFired(t, cmd, started, seen)
			assert.Assert(t, strings.Contains(seen, tc.wantOut), "want %q in the output:\n%s", tc.wantOut, seen)
			assert.Equal(t, status(cmd), tc.wantStatus, "output:\n%s", seen)

			// racekit waited for what it halted before it exited. What
			// it killed, or what was left when it died, each spawn's
			// reaper killed and reaped before it exited; and every
			// reaper holds racekit's stderr until then. So at the end
			// of the output every one is exiting, and each exit is
			// waited for here: the kernel closes an exiting process's
			// files (its end of the pipe, whose close ends the output)
			// before it marks the process exited (do_exit's exit_files
			// before exit_notify, which makes a pidfd readable), and on
			// a loaded machine a reaper was once seen between the two
			// (make test with a busy loop on each core, 2026-12-07).
			// The wait ends on each exit; its bound is for a process
			// that nothing ends, such as the scenario's sleep 600.
			for _, c := range children {
				ended, err := c.wait(exitBound)
				assert.NilError(t, err)
				assert.Assert(t, ended, "process %s, which the scenario spawned or its program started, still runs %v after racekit run's output ended (%s)", c, exitBound, status(cmd))
			}
			left := marked(mark)
			assert.Assert(t, len(left) == 0, "processes the scenario spawned outlived racekit run (%s):\n%s\noutput:\n%s", status(cmd), strings.Join(left, "\n"), seen)
			procs, files := leftovers(t, tmp)
			if tc.signal == syscall.SIGKILL {
				// Killed, racekit leaves its scenario's work folder
				// (testscript's, a few KB): the watchdog removes the
				// control plane's folders, not those.
				files = slices.DeleteFunc(files, func(f string) bool { return strings.HasPrefix(f, "go-test-script") })
			}
			assert.Assert(t, len(procs) == 0, "processes left running:\n%s", strings.Join(procs, "\n"))
			assert.Assert(t, len(files) == 0, "left in TMPDIR: %v", files)
		})
	}
}

// marked returns the live processes whose environment holds a variable
// that starts with mark, as "PID: command line"; a zombie has exited, and
// is left out.
func marked(mark string) []string {
	var procs []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		environ, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !slices.ContainsFunc(bytes.Split(environ, []byte{0}), func(v []byte) bool { return bytes.HasPrefix(v, []byte(mark)) }) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		procs = append(procs, e.Name()+": "+strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " ")))
	}
	return procs
}

// treeChildEnv is the variable that names what the harness's test binary
// is when a scenario spawns it (harness/running_test.go's childEnv).
const treeChildEnv = "RACEKIT_HARNESS_CHILD"

// environ returns the environment of proc, as marked returns it, or
// nothing once it has exited.
func environ(proc string) []string {
	pid, _, _ := strings.Cut(proc, ":")
	b, err := os.ReadFile(filepath.Join("/proc", pid, "environ"))
	if err != nil {
		return nil
	}
	return strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
}

// endOrphans kills procs, as running and marked return them, such as the
// control plane of a racekit killed outright, and waits, at most 10s each,
// for them to exit, so that their TMPDIR can be removed. The test has
// checked what it had to before.
func endOrphans(procs []string) {
	for _, p := range procs {
		w, err := watchExit(p)
		if err != nil {
			continue // it has exited meanwhile
		}
		_ = syscall.Kill(w.pid, syscall.SIGKILL)
		_, _ = w.wait(10 * time.Second)
		w.close()
	}
}

// sysPidfdOpen is pidfd_open(2), which has the same number on every Linux
// architecture; the syscall package predates it.
const sysPidfdOpen = 434

// exitWatch is a pidfd of a process, which becomes readable when the
// process exits: a wait for a process that is not this one's child, woken
// by the kernel, with no poll of /proc.
type exitWatch struct {
	pid, fd int
	proc    string // "PID: command line", for messages
}

// watchExit opens an exitWatch on proc, as running and marked return it.
func watchExit(proc string) (exitWatch, error) {
	pid, err := strconv.Atoi(strings.SplitN(proc, ":", 2)[0])
	if err != nil {
		return exitWatch{}, err
	}
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if errno != 0 {
		return exitWatch{}, fmt.Errorf("pidfd_open %d: %w", pid, errno)
	}
	return exitWatch{pid: pid, fd: int(fd), proc: proc}, nil
}

func (w exitWatch) String() string { return w.proc }

// exitBound bounds the wait for a process that is ending to have exited:
// far longer than an exit takes on a loaded machine, far shorter than the
// scenario's sleep 600, which only a kill ends.
const exitBound = time.Minute

// wait reports whether the process exits within d.
func (w exitWatch) wait(d time.Duration) (bool, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return false, err
	}
	defer syscall.Close(ep)
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, w.fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(w.fd)}); err != nil {
		return false, err
	}
	deadline := time.Now().Add(d)
	for {
		n, err := syscall.EpollWait(ep, make([]syscall.EpollEvent, 1), int(max(time.Until(deadline), 0).Milliseconds()))
		if err == syscall.EINTR {
			continue
		}
		return n > 0, err
	}
}

func (w exitWatch) close() { syscall.Close(w.fd) }
