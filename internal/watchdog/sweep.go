package watchdog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ElsewhereFile, in a root, names one more folder of the control plane's:
// the one envtest makes for its webhook serving certificates, in the
// temporary directory, which it cannot be told to put elsewhere.
const ElsewhereFile = "elsewhere"

// elsewherePrefix starts the name of every folder envtest makes for its
// webhook serving certificates.
const elsewherePrefix = "envtest-serving-certs-"

// exitBound bounds the wait for a killed process to exit. SIGKILL ends a
// process at once unless it is stuck in the kernel (a disk write that never
// returns); the watchdog must not wait for that forever.
const exitBound = 10 * time.Second

// rounds is how many times at most the sweep looks for processes to kill;
// it looks at least twice, and stops at the first look after the first
// that finds none. A process that the starting process was executing as it
// died has its command line only once exec has gone past closing its
// close-on-exec files (which is what ended the pipe): a look may miss it,
// the next one, a /proc scan later, finds it.
const rounds = 3

// sweepRoot kills every process whose command line names a path in root,
// with its process group, waits for each to exit, and removes root and
// what its ElsewhereFile names. It returns what it killed, as
// "etcd (pid 123)".
func sweepRoot(root string) ([]string, error) {
	var killed []string
	var errs []error
	for i := range rounds {
		procs := naming(root)
		if len(procs) == 0 {
			if i == 0 {
				continue
			}
			break
		}
		for _, p := range procs {
			if err := p.kill(); err != nil {
				errs = append(errs, fmt.Errorf("kill %s: %w", p, err))
			}
			killed = append(killed, p.String())
		}
		errs = append(errs, awaitExit(procs, exitBound))
		for _, p := range procs {
			p.close()
		}
	}
	for _, p := range naming(root) {
		errs = append(errs, fmt.Errorf("%s still runs after %d rounds of SIGKILL", p, rounds))
		p.close()
	}
	errs = append(errs, RemoveRoot(root))
	return killed, errors.Join(errs...)
}

// RemoveRoot removes root and the folder its ElsewhereFile names. That
// folder must be envtest's (its name says so), so that a stray file cannot
// make it remove something else.
func RemoveRoot(root string) error {
	var errs []error
	if b, err := os.ReadFile(filepath.Join(root, ElsewhereFile)); err == nil {
		if dir := string(b); strings.HasPrefix(filepath.Base(dir), elsewherePrefix) {
			errs = append(errs, os.RemoveAll(dir))
		}
	}
	errs = append(errs, os.RemoveAll(root))
	return errors.Join(errs...)
}

// process is a live process the sweep found, held by a pidfd: a process
// ID can be reused once its process is gone, a pidfd cannot.
type process struct {
	pid  int
	comm string
	fd   int // the pidfd, or -1 on a kernel without them (before Linux 5.3)
}

func (p process) String() string { return fmt.Sprintf("%s (pid %d)", p.comm, p.pid) }

func (p process) close() {
	if p.fd >= 0 {
		syscall.Close(p.fd)
	}
}

// naming returns the live processes, other than this one, whose command
// line names root or a path inside it.
func naming(root string) []process {
	self := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	var out []process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || !namesRoot(cmdline(pid), root) {
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		switch {
		case errors.Is(err, unix.ENOSYS):
			fd = -1
		case err != nil:
			continue // it has exited
		}
		p := process{pid: pid, fd: fd}
		// The pidfd holds the process that had pid when it opened: if
		// that one is still alive, the command line read now is its.
		if !namesRoot(cmdline(pid), root) || p.exited() {
			p.close()
			continue
		}
		comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		p.comm = strings.TrimSpace(string(comm))
		out = append(out, p)
	}
	return out
}

// cmdline returns the command line of the process pid, or nothing once it
// has exited (a zombie has none).
func cmdline(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
}

// namesRoot reports whether one of args, or the value of a --flag=value
// among them, is root or a path inside it.
func namesRoot(args []string, root string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			if _, v, ok := strings.Cut(a, "="); ok {
				a = v
			}
		}
		if a == root || strings.HasPrefix(a, root+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// kill sends SIGKILL to p's process group, if p leads one (envtest makes
// each of its processes the leader of a group of its own), and to p.
func (p process) kill() error {
	if pgid, err := syscall.Getpgid(p.pid); err == nil && pgid == p.pid {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
	}
	var err error
	if p.fd >= 0 {
		err = unix.PidfdSendSignal(p.fd, unix.SIGKILL, nil, 0)
	} else {
		err = syscall.Kill(p.pid, syscall.SIGKILL)
	}
	if errors.Is(err, syscall.ESRCH) {
		return nil // it has exited already
	}
	return err
}

// exited reports whether p has exited.
func (p process) exited() bool {
	if p.fd < 0 {
		return !alive(p.pid)
	}
	fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0
}

// awaitExit waits for every one of procs to exit, and fails for those that
// are still running after bound. A pidfd becomes readable when its process
// exits: the kernel wakes the wait. Without pidfds (Linux before 5.3)
// nothing wakes a wait for a process that is not a child: it looks again
// every 10 ms, within the same bound.
func awaitExit(procs []process, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	var fds []unix.PollFd
	byFD := map[int32]process{}
	var legacy []process
	for _, p := range procs {
		if p.fd < 0 {
			legacy = append(legacy, p)
			continue
		}
		fds = append(fds, unix.PollFd{Fd: int32(p.fd), Events: unix.POLLIN})
		byFD[int32(p.fd)] = p
	}
	for len(fds) > 0 {
		left := time.Until(deadline)
		if left <= 0 {
			var errs []error
			for _, f := range fds {
				errs = append(errs, fmt.Errorf("%s still runs %v after SIGKILL", byFD[f.Fd], bound))
			}
			return errors.Join(errs...)
		}
		if _, err := unix.Poll(fds, int(left.Milliseconds())+1); err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("wait for the killed processes: %w", err)
		}
		running := fds[:0]
		for _, f := range fds {
			if f.Revents == 0 {
				running = append(running, f)
			}
		}
		fds = running
	}
	for _, p := range legacy {
		for alive(p.pid) {
			if time.Now().After(deadline) {
				return fmt.Errorf("%s still runs %v after SIGKILL", p, bound)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return nil
}

// alive reports whether the process pid runs: it exists and is not a
// zombie. Only for kernels without pidfds.
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}
