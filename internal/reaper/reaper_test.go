package reaper

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	"gotest.tools/v3/assert/cmp"
)

// exitBound bounds a wait for a process the test expects to exit: a guard
// against a survivor, not a speed target.
const exitBound = 10 * time.Second

// proc is a process the test watches, held by a pidfd, which becomes
// readable when the process exits: a process ID can be reused once its
// process is reaped, a pidfd cannot.
type proc struct {
	what string
	pid  int
	fd   int
}

// watch opens a pidfd on pid, which must be alive.
func watch(t *testing.T, what string, pid int) proc {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	assert.NilError(t, err, "pidfd_open %s (pid %d)", what, pid)
	t.Cleanup(func() {
		// A process a failed test leaves behind.
		_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		unix.Close(fd)
	})
	return proc{what: what, pid: pid, fd: fd}
}

func (p proc) String() string { return fmt.Sprintf("%s (pid %d)", p.what, p.pid) }

// exited reports whether p has exited, waiting at most d for it.
func (p proc) exited(d time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(d)
	for {
		n, err := unix.Poll(fds, int(max(time.Until(deadline), 0).Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n > 0
	}
}

// running returns those of procs that have not exited, now.
func running(procs []proc) []string {
	var out []string
	for _, p := range procs {
		if !p.exited(0) {
			out = append(out, p.String())
		}
	}
	return out
}

// helperTree is a tree of the helper processes, started under a reaper.
type helperTree struct {
	tree  *Tree
	stdin io.WriteCloser
	procs []proc // the program, the daemon and the leaf
}

// startTree starts the helper's program under a reaper, with then as
// helperThen, and returns once the daemon has printed its pids.
func startTree(t *testing.T, then string) *helperTree {
	t.Helper()
	cmd := self("program")
	cmd.Env = append(cmd.Env, helperThen+"="+then)
	pr, pw, err := os.Pipe()
	assert.NilError(t, err)
	defer pw.Close()
	t.Cleanup(func() { pr.Close() })
	sr, sw, err := os.Pipe()
	assert.NilError(t, err)
	defer sr.Close()
	cmd.Stdin, cmd.Stdout = sr, pw
	tree, err := Start(cmd)
	assert.NilError(t, err)
	t.Cleanup(func() { tree.Kill(); _ = tree.Wait() })
	daemon, leaf := readPids(t, bufio.NewReader(pr))
	h := &helperTree{tree: tree, stdin: sw, procs: []proc{watch(t, "program", tree.Pid()), watch(t, "daemon", daemon), watch(t, "leaf", leaf)}}
	// The daemon is in a session of its own and its parent has exited:
	// the reaper must have adopted it, or nothing would find it.
	assert.Equal(t, parentOf(daemon), tree.reaper.Process.Pid, "the daemon's parent must be the reaper")
	assert.Assert(t, sessionOf(daemon) != sessionOf(tree.Pid()), "the daemon must be in a session of its own")
	assert.Assert(t, cmp.Len(running(h.procs), 3))
	return h
}

// sessionOf returns the session ID of pid.
func sessionOf(pid int) int {
	sid, _ := unix.Getsid(pid)
	return sid
}

// waitTree returns what tree.Wait returns, and fails t if the reaper has
// not exited within exitBound: it kills the reaper then, so that Wait
// returns.
func waitTree(t *testing.T, tree *Tree) error {
	t.Helper()
	guard := time.AfterFunc(exitBound, func() { _ = tree.reaper.Process.Kill() })
	err := tree.Wait()
	if !guard.Stop() {
		t.Fatalf("the reaper did not exit within %v: killed it", exitBound)
	}
	return err
}

// TestTreeGoes ends a tree's program in each way it ends, and checks
// that when Wait returns every process of the tree has exited: the
// program, and the daemon it double forked into a session of its own,
// which ignores SIGTERM, and the daemon's child in a group of its own.
func TestTreeGoes(t *testing.T) {
	tests := []struct {
		name    string
		then    string
		end     func(h *helperTree)
		wantErr string
	}{
		{name: "Kill", end: func(h *helperTree) { h.tree.Kill() }, wantErr: "signal: killed"},
		{name: "Terminate", end: func(h *helperTree) { h.tree.Terminate() }},
		{name: "the program exits on its own", then: "stdin", end: func(h *helperTree) { h.stdin.Close() }, wantErr: "exit status 3"},
		{name: "the program is killed by another", end: func(h *helperTree) { _ = syscall.Kill(h.tree.Pid(), syscall.SIGKILL) }, wantErr: "signal: killed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := startTree(t, tc.then)
			tc.end(h)
			err := waitTree(t, h.tree)
			if tc.wantErr == "" {
				assert.NilError(t, err)
			} else {
				assert.Error(t, err, tc.wantErr)
			}
			// The reaper reaped them all before it exited: no wait.
			assert.Assert(t, cmp.Len(running(h.procs), 0), "still running once Wait returned: %v", running(h.procs))
		})
	}
}

// TestTreesApart checks that Kill of one tree leaves another alone, as
// two scenarios' spawns in one process must be.
func TestTreesApart(t *testing.T) {
	a, b := startTree(t, ""), startTree(t, "")
	a.tree.Kill()
	assert.Error(t, waitTree(t, a.tree), "signal: killed")
	assert.Assert(t, cmp.Len(running(a.procs), 0), "a still runs: %v", running(a.procs))
	assert.Assert(t, cmp.Len(running(b.procs), 3), "killing a killed some of b: running are %v", running(b.procs))
	b.tree.Terminate()
	assert.NilError(t, waitTree(t, b.tree))
	assert.Assert(t, cmp.Len(running(b.procs), 0), "b still runs: %v", running(b.procs))
}

// TestStarterDies kills the process that started a tree with SIGKILL,
// which no handler sees, and checks that the reaper kills the tree: the
// end of the starter's output, which the reaper and every process of the
// tree hold, is the end of them all.
func TestStarterDies(t *testing.T) {
	starter := exec.Command(os.Args[0])
	starter.Env = append(os.Environ(), helperEnv+"=starter")
	pr, pw, err := os.Pipe()
	assert.NilError(t, err)
	defer pr.Close()
	starter.Stdout, starter.Stderr = pw, pw
	assert.NilError(t, starter.Start())
	pw.Close()
	// The starter's line and the daemon's come in either order.
	out := bufio.NewReader(pr)
	var procs []proc
	for range 2 {
		line, err := out.ReadString('\n')
		assert.NilError(t, err, "read the starter's output: %q", line)
		var program, daemon, leaf int
		if _, err := fmt.Sscanf(line, "program %d", &program); err == nil {
			procs = append(procs, watch(t, "program", program))
		} else if _, err := fmt.Sscanf(line, "pids %d %d", &daemon, &leaf); err == nil {
			procs = append(procs, watch(t, "daemon", daemon), watch(t, "leaf", leaf))
		} else {
			t.Fatalf("want program PID or pids DAEMON LEAF, got %q", line)
		}
	}
	assert.Assert(t, cmp.Len(running(procs), 3))

	assert.NilError(t, starter.Process.Kill())
	// Until the reaper and the tree have exited; the deadline is a guard
	// against a survivor.
	assert.NilError(t, pr.SetReadDeadline(time.Now().Add(exitBound)))
	rest, err := io.ReadAll(out)
	assert.NilError(t, err, "the output did not end within %v of the starter's death: running are %v", exitBound, running(procs))
	assert.Error(t, starter.Wait(), "signal: killed")
	assert.Assert(t, cmp.Len(running(procs), 0), "still running once the output ended: %v; output: %s", running(procs), rest)
}

// TestExitStatus checks that Wait returns what cmd.Wait returns for the
// same program run without a reaper: its exit code, or the signal that
// killed it.
func TestExitStatus(t *testing.T) {
	for _, script := range []string{"exit 0", "exit 7", "kill -TERM $$", "kill -KILL $$", "kill -USR1 $$", "kill -HUP $$", "kill -PIPE $$"} {
		t.Run(script, func(t *testing.T) {
			t.Parallel()
			if sig, ok := strings.CutPrefix(script, "kill -"); ok && ignoredHere(t, strings.TrimSuffix(sig, " $$")) {
				// A plain child inherits the ignored signal and lives
				// through it; the reaper's program does not (it starts
				// with no signal ignored, TestProgramAsStarted).
				t.Skipf("this test process ignores SIG%s (started under nohup?), so a plain run cannot show what that signal does", strings.TrimSuffix(sig, " $$"))
			}
			plain := exec.Command("/bin/sh", "-c", script).Run()
			tree, err := Start(exec.Command("/bin/sh", "-c", script))
			assert.NilError(t, err)
			assert.DeepEqual(t, errString(tree.Wait()), errString(plain))
		})
	}
}

// ignoredHere reports whether this process ignores the signal called name
// (HUP), as /proc/self/status's SigIgn says.
func ignoredHere(t *testing.T, name string) bool {
	nums := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL, "USR1": syscall.SIGUSR1, "HUP": syscall.SIGHUP, "PIPE": syscall.SIGPIPE}
	sig, ok := nums[name]
	assert.Assert(t, ok, "no signal %s", name)
	status, err := os.ReadFile("/proc/self/status")
	assert.NilError(t, err)
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			assert.NilError(t, err)
			return mask&(1<<(uint(sig)-1)) != 0
		}
	}
	return false
}

// errString returns err's message, or "" for nil.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestStartFails checks that a program that cannot start fails Start as
// it fails cmd.Start, with the same message and the same kind of error.
func TestStartFails(t *testing.T) {
	dir := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "data"), []byte("not a program"), 0o644))
	tests := []struct {
		name string
		cmd  func() *exec.Cmd
		kind error
	}{
		{name: "no such file", cmd: func() *exec.Cmd { return exec.Command("./nope") }, kind: fs.ErrNotExist},
		{name: "not executable", cmd: func() *exec.Cmd { return exec.Command("./data") }, kind: fs.ErrPermission},
		{name: "not on PATH", cmd: func() *exec.Cmd { return exec.Command("racekit-no-such-command") }, kind: exec.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plain := tc.cmd()
			plain.Dir = dir
			want := plain.Start()
			assert.ErrorIs(t, want, tc.kind)
			cmd := tc.cmd()
			cmd.Dir = dir
			tree, err := Start(cmd)
			assert.Assert(t, tree == nil)
			assert.ErrorIs(t, err, tc.kind)
			assert.Equal(t, err.Error(), want.Error())
		})
	}
}

// TestProgramAsStarted checks what the program gets, against what cmd
// says: its arguments, folder and environment (without the reaper's
// variable), a process group of its own, and no signal ignored that the
// reaper only catches. It reads them once the program has said it runs:
// Start returns once the exec has succeeded, and the kernel sets the new
// program's command line a moment after (under load, a read of
// /proc/PID/cmdline in between found it empty).
func TestProgramAsStarted(t *testing.T) {
	dir := t.TempDir()
	cmd := self("ready")
	cmd.Args = append(cmd.Args, "600")
	cmd.Dir = dir
	cmd.Env = []string{helperEnv + "=ready", "RACEKIT_REAPER_TEST=1", "PATH=/bin"}
	pr, pw, err := os.Pipe()
	assert.NilError(t, err)
	defer pr.Close()
	cmd.Stdin, cmd.Stdout = nil, pw
	tree, err := Start(cmd)
	pw.Close()
	assert.NilError(t, err)
	defer func() { tree.Kill(); _ = tree.Wait() }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	assert.NilError(t, err)
	assert.Equal(t, line, "ready\n")
	pid := tree.Pid()
	proc := func(file string) string {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), file))
		assert.NilError(t, err)
		return string(b)
	}
	assert.DeepEqual(t, strings.Split(strings.TrimSuffix(proc("cmdline"), "\x00"), "\x00"), cmd.Args)
	assert.DeepEqual(t, strings.Split(strings.TrimSuffix(proc("environ"), "\x00"), "\x00"), cmd.Env)
	cwd, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "cwd"))
	assert.NilError(t, err)
	assert.Equal(t, cwd, dir)
	pgid, err := syscall.Getpgid(pid)
	assert.NilError(t, err)
	assert.Equal(t, pgid, pid, "the program must lead a process group of its own")
	var ignored uint64
	for line := range strings.SplitSeq(proc("status"), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			ignored, err = strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			assert.NilError(t, err)
		}
	}
	for _, s := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		assert.Assert(t, ignored&(1<<(uint(s)-1)) == 0, "the program starts with %v ignored (SigIgn %x)", s, ignored)
	}
	assert.Assert(t, !slices.Contains(strings.Split(proc("environ"), "\x00"), envVar+"=1"))
}

// TestProgramFiles checks that the program has the files a program
// started without a reaper has (stdin, stdout, stderr, and whatever this
// process inherited and left open on exec), and none of the reaper's
// pipes. The helper says when it has started, so that no file the
// runtime opens as it starts is counted.
func TestProgramFiles(t *testing.T) {
	// Both programs start from this process's files as they are now, none
	// inherited past them: under go test -json (make timings, 2026-12-07)
	// this process had an fd 10 on /dev/null, inherited from the shell
	// without close-on-exec, which the reaper passed on to its program
	// and the plain start here did not, and the comparison failed on it.
	fds, err := os.ReadDir("/proc/self/fd")
	assert.NilError(t, err)
	for _, e := range fds {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
	started := func(start func(*exec.Cmd) int) map[string]string {
		cmd := self("ready")
		pr, pw, err := os.Pipe()
		assert.NilError(t, err)
		defer pr.Close()
		cmd.Stdin, cmd.Stdout = nil, pw
		pid := start(cmd)
		pw.Close()
		line, err := bufio.NewReader(pr).ReadString('\n')
		assert.NilError(t, err)
		assert.Equal(t, line, "ready\n")
		return openFiles(t, pid)
	}
	plain := started(func(cmd *exec.Cmd) int {
		assert.NilError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd.Process.Pid
	})
	var tree *Tree
	reaped := started(func(cmd *exec.Cmd) int {
		var err error
		tree, err = Start(cmd)
		assert.NilError(t, err)
		t.Cleanup(func() { tree.Kill(); _ = tree.Wait() })
		return tree.Pid()
	})
	assert.DeepEqual(t, slices.Sorted(maps.Keys(reaped)), slices.Sorted(maps.Keys(plain)))
	control := openFiles(t, tree.reaper.Process.Pid)[strconv.Itoa(controlFD)]
	assert.Assert(t, strings.HasPrefix(control, "pipe:"), "the reaper's control pipe is %q", control)
	for fd, file := range reaped {
		assert.Assert(t, file != control, "the program has the reaper's control pipe as fd %s", fd)
	}
}

// openFiles returns what each file descriptor of pid is open on, as
// /proc/PID/fd's links say.
func openFiles(t *testing.T, pid int) map[string]string {
	t.Helper()
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	assert.NilError(t, err)
	open := map[string]string{}
	for _, fd := range fds {
		if file, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil {
			open[fd.Name()] = file
		}
	}
	return open
}
