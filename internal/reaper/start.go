package reaper

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The protocol between Start and the reaper. The reaper runs as
// "racekit-reaper PATH ARG0 ARG...", with envVar set, the control pipe's
// read end as fd 3, the reply pipe's write end as fd 4 and the starting
// process's stderr as fd 5. It starts PATH with ARG0 ARG... as its argv,
// writes "started PID\n" (or "error ERRNO\n") on fd 4 and closes it, then
// reads bytes from fd 3: terminate or kill, or the end of the pipe when
// the starting process has gone.
const (
	envVar            = "RACEKIT_REAPER"
	controlFD         = 3
	replyFD           = 4
	holdFD            = 5
	terminate    byte = 't'
	kill         byte = 'k'
	replyStarted      = "started "
	replyError        = "error "
)

// Name is the reaper's command: its argv[0], and, cut to the kernel's 15
// bytes, what /proc/PID/comm shows.
const Name = "racekit-reaper"

// replyBound bounds how long Start waits for the reaper to say that the
// program started: a guard against a reaper that hangs as it starts, not
// a speed target (it answers in milliseconds).
const replyBound = 30 * time.Second

// Tree is a program that Start started under a reaper, with every process
// it starts.
type Tree struct {
	reaper *exec.Cmd
	pid    int

	mu sync.Mutex
	// control is the write end of the pipe the reaper reads; nil once
	// the reaper has exited.
	control *os.File
}

// Start starts cmd's program (its Path, Args, Dir, Env, Stdin, Stdout,
// Stderr and WaitDelay) under a reaper, and returns once it runs, or with
// the error starting it gave, as cmd.Start would (an *fs.PathError whose
// Err is the errno of the failed exec, so that errors.Is(err,
// fs.ErrNotExist) and the like hold). cmd must not be started, and must
// have no SysProcAttr or ExtraFiles: the program runs in a process group
// of its own, with stdin, stdout and stderr alone. Call Wait to release
// the tree's resources.
func Start(cmd *exec.Cmd) (*Tree, error) {
	switch {
	case cmd.Err != nil:
		return nil, cmd.Err
	case cmd.Process != nil:
		return nil, errors.New("reaper: the command was started already")
	case cmd.SysProcAttr != nil || len(cmd.ExtraFiles) > 0:
		return nil, errors.New("reaper: the command has a SysProcAttr or ExtraFiles, which the reaper does not pass on")
	}
	controlR, controlW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start %s under a reaper: %w", cmd.Path, err)
	}
	replyR, replyW, err := os.Pipe()
	if err != nil {
		controlR.Close()
		controlW.Close()
		return nil, fmt.Errorf("start %s under a reaper: %w", cmd.Path, err)
	}
	defer replyR.Close()
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	r := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       append([]string{Name, cmd.Path}, cmd.Args...),
		Dir:        cmd.Dir,
		Env:        append(programEnv(env), envVar+"=1"),
		Stdin:      cmd.Stdin,
		Stdout:     cmd.Stdout,
		Stderr:     cmd.Stderr,
		ExtraFiles: []*os.File{controlR, replyW, os.Stderr},
		// Not in this process's group, which a Ctrl-C at the terminal
		// reaches, nor in the program's, which a kill of the group
		// reaches.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
		WaitDelay:   cmd.WaitDelay,
	}
	err = r.Start()
	controlR.Close()
	replyW.Close()
	if err != nil {
		controlW.Close()
		return nil, fmt.Errorf("start %s under a reaper: %w", cmd.Path, err)
	}
	_ = replyR.SetReadDeadline(time.Now().Add(replyBound))
	line, rerr := bufio.NewReader(replyR).ReadString('\n')
	line = strings.TrimSuffix(line, "\n")
	if s, ok := strings.CutPrefix(line, replyStarted); ok && rerr == nil {
		if pid, err := strconv.Atoi(s); err == nil && pid > 0 {
			return &Tree{reaper: r, pid: pid, control: controlW}, nil
		}
	}
	// The reaper exits on its own after an error; one that hangs as it
	// starts is killed.
	controlW.Close()
	if errors.Is(rerr, os.ErrDeadlineExceeded) {
		_ = r.Process.Kill()
	}
	_ = r.Wait()
	if s, ok := strings.CutPrefix(line, replyError); ok {
		if n, err := strconv.Atoi(s); err == nil {
			return nil, &fs.PathError{Op: "fork/exec", Path: cmd.Path, Err: syscall.Errno(n)}
		}
	}
	return nil, fmt.Errorf("start %s under a reaper: the reaper answered %q (%v)", cmd.Path, line, rerr)
}

// Pid returns the program's process ID, which is also its process
// group's.
func (t *Tree) Pid() int { return t.pid }

// Terminate sends SIGTERM to the program's process group, as a halt
// does; a process of the tree outside it is killed once the program has
// exited. It does nothing once the program has been reaped.
func (t *Tree) Terminate() { t.send(terminate) }

// Kill sends SIGKILL to the program's process group and to every process
// of the tree, now and as each appears, until none is left; Wait returns
// then.
func (t *Tree) Kill() { t.send(kill) }

// send writes b to the control pipe, unless the reaper has exited.
func (t *Tree) send(b byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.control != nil {
		// A reaper that exited and was not yet waited for reads
		// nothing: the write fails, and there is nothing to tell it.
		_, _ = t.control.Write([]byte{b})
	}
}

// Wait waits for the reaper to exit, which it does once the program has
// exited and every other process of the tree has been killed and reaped,
// and returns the program's status as cmd.Wait would: nil, or an
// *exec.ExitError with its exit code or the signal that killed it.
func (t *Tree) Wait() error {
	err := t.reaper.Wait()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.control != nil {
		t.control.Close()
		t.control = nil
	}
	return err
}
