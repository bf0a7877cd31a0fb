package reaper

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// init turns this process into a reaper when Start ran it: it never
// returns then.
func init() {
	if os.Getenv(envVar) == "1" {
		reap(os.Args)
	}
}

// reap is the reaper: it starts the program, passes on what the control
// pipe says, reaps every process of the tree, and exits as the program
// did once none is left. It runs on the main thread (the runtime locks
// the main goroutine to it during init), which is the program's parent
// thread: the program's parent-death signal fires when this process
// dies, not when some thread of it ends.
func reap(args []string) {
	runtime.LockOSThread()
	setComm(Name)
	// A signal for the terminal's process group or for the starting
	// process must not end the reaper before its tree. Caught, not
	// ignored, so that the program starts with these signals at their
	// defaults: exec resets a caught signal, and keeps an ignored one
	// ignored.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	if len(args) < 3 || !isOpen(controlFD) || !isOpen(replyFD) || !isOpen(holdFD) {
		fmt.Fprintf(os.Stderr, "%s: want %s PATH ARG0 [ARG...], with the pipes Start gives it as fds %d, %d and %d; this process is run by package reaper's Start only\n",
			Name, Name, controlFD, replyFD, holdFD)
		syscall.Exit(2)
	}
	// The program inherits none of them: the control pipe must end when
	// the starting process does, not when the last of the tree does.
	for _, fd := range []int{controlFD, replyFD, holdFD} {
		syscall.CloseOnExec(fd)
	}
	reply := os.NewFile(replyFD, "reply")
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(reply, "%s%d\n", replyError, errnoOf(err))
		syscall.Exit(1)
	}
	pid, err := syscall.ForkExec(args[1], args[2:], &syscall.ProcAttr{
		Env:   programEnv(os.Environ()),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		fmt.Fprintf(reply, "%s%d\n", replyError, errnoOf(err))
		syscall.Exit(1)
	}
	// If the reply cannot be written, the starter has gone: the control
	// pipe says so too.
	fmt.Fprintf(reply, "%s%d\n", replyStarted, pid)
	reply.Close()

	t := &tree{program: pid}
	go t.listen(os.NewFile(controlFD, "control"))
	t.reapAll()
	t.mu.Lock()
	reaped, status := t.reaped, t.status
	t.mu.Unlock()
	if !reaped {
		fmt.Fprintf(os.Stderr, "%s: lost track of the program (pid %d): waitid found no child before it was reaped\n", Name, pid)
		syscall.Exit(1)
	}
	exitAs(status)
}

// programEnv is the reaper's environment without envVar: the program's.
func programEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, envVar+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// tree is the reaper's view of its descendants: the program, and whether
// it is gone.
type tree struct {
	program int

	// mu is held wherever a child is reaped, and wherever a pid is
	// signalled: a child's pid, and its group's, name it until it is
	// reaped, and only then may the kernel give them to another process.
	mu sync.Mutex
	// reaped is set once the program is reaped, with how it ended.
	reaped bool
	status syscall.WaitStatus
	// dying is set once the program has exited or Kill came: from then
	// on every child of the reaper is killed as it appears.
	dying bool
}

// listen reads the control pipe: terminate, for the program's group;
// kill, or the pipe's end (the starting process has gone, however it
// ended), for the whole tree.
func (t *tree) listen(control *os.File) {
	var b [1]byte
	for {
		n, _ := control.Read(b[:])
		if n == 1 && b[0] == terminate {
			t.signalProgram(syscall.SIGTERM)
			continue
		}
		t.killAll()
		return
	}
}

// signalProgram sends s to the program's process group, unless the
// program has been reaped.
func (t *tree) signalProgram(s syscall.Signal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.reaped {
		_ = syscall.Kill(-t.program, s)
	}
}

// killAll kills the program's group and every child of the reaper now,
// and has reapAll kill every child that appears later, as each process
// dies and its own children come to the reaper.
func (t *tree) killAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dying = true
	if !t.reaped {
		_ = syscall.Kill(-t.program, syscall.SIGKILL)
	}
	killChildren()
}

// reapAll reaps every child of the reaper as it exits, until it has none:
// the program, and the orphans of the tree, which the kernel gives the
// reaper as their parents die. Once the program is gone, it kills every
// child it has, again after each death, since a process that dies hands
// its own children to the reaper first (the kernel reparents them before
// it reports the death). waitid with WNOWAIT wakes it without reaping, so
// that the reaping itself happens under t.mu.
func (t *tree) reapAll() {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return // ECHILD: the tree is gone
		}
		t.mu.Lock()
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil || pid <= 0 {
				break
			}
			if pid == t.program {
				t.reaped, t.status, t.dying = true, ws, true
			}
		}
		if t.dying {
			killChildren()
		}
		t.mu.Unlock()
	}
}

// killChildren sends SIGKILL to every child of this process, as /proc
// shows them. The caller holds tree.mu, so no child is reaped meanwhile,
// and each pid still names the child it was read for.
func killChildren() {
	// A reaper with no child, which the program's own exit usually
	// leaves, need not read all of /proc to learn it.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); errors.Is(err, syscall.ECHILD) {
		return
	}
	self := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || parentOf(pid) != self {
			continue
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// parentOf returns the parent of the process pid, or 0 when it has gone.
func parentOf(pid int) int {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The state and the parent follow the command name, in parentheses,
	// which may hold spaces and parentheses itself.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// exitAs ends the reaper as the program ended: with its exit code, or by
// the signal that killed it, so that the starting process sees what it
// would have seen of the program itself. A core dump of the program is
// the program's; the reaper dumps none.
func exitAs(ws syscall.WaitStatus) {
	if ws.Exited() {
		// syscall.Exit, not os.Exit: no exit hooks (a race detector's
		// wait for reports, a coverage profile) for a process that
		// runs none of racekit's code.
		syscall.Exit(ws.ExitStatus())
	}
	if ws.Signaled() {
		dieOf(ws.Signal())
	}
	syscall.Exit(1)
}

// dieOf ends this process by s, at its default action: Go's handlers,
// which would turn some signals into a panic's traceback and ignore
// others sent by kill, are put aside with the raw system calls, since the
// process ends at once.
func dieOf(s syscall.Signal) {
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	if s == syscall.SIGKILL {
		_ = syscall.Kill(os.Getpid(), s) // no handler to put aside
	}
	// A struct sigaction of zeros is SIG_DFL with no flags and an empty
	// mask, whatever its layout; it is larger than any architecture's.
	var act [8]uint64
	if _, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(s), uintptr(unsafe.Pointer(&act[0])), 0, 8, 0, 0); e == 0 {
		mask := uint64(1) << (uint(s) - 1)
		_, _, _ = syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_UNBLOCK, uintptr(unsafe.Pointer(&mask)), 0, 8, 0, 0)
		_ = unix.Tgkill(os.Getpid(), unix.Gettid(), s)
	}
	// A signal whose default is not to end a process ends nothing.
	syscall.Exit(128 + int(s))
}

// errnoOf returns err's errno, for the reply, or EINVAL when it has none.
func errnoOf(err error) syscall.Errno {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return syscall.EINVAL
}

// setComm names the process s where ps and top show the command, instead
// of "exe" (from /proc/self/exe).
func setComm(s string) {
	b := append([]byte(s), 0)
	_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0)
}

// isOpen reports whether fd is an open file of this process.
func isOpen(fd int) bool {
	var st syscall.Stat_t
	return syscall.Fstat(fd, &st) == nil
}
