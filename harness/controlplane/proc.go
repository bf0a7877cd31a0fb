package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/racekit/racekit/internal/watchdog"
)

// child is a running child process of this one, as /proc shows it.
type child struct {
	pid     int
	comm    string   // the command name, such as etcd
	args    []string // the command line
	peakRSS int64    // VmHWM, in bytes
}

// controlPlaneChildren returns this process's running kube-apiserver and
// etcd children, from /proc; zombies (exited, not yet reaped) are left
// out. On a system without /proc it returns none.
func controlPlaneChildren() []child { return children("kube-apiserver", "etcd") }

// watchdogComm is what /proc/PID/comm shows for a control plane's
// watchdog: the first 15 bytes of its name, the kernel's limit.
var watchdogComm = watchdog.Name[:min(len(watchdog.Name), 15)]

// children returns this process's running children whose command name
// (/proc/PID/comm) is one of names.
func children(names ...string) []child {
	self := os.Getpid()
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var out []child
	for _, p := range procs {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil || pid == self {
			continue
		}
		comm, err := os.ReadFile(filepath.Join(p, "comm"))
		if err != nil {
			continue
		}
		name := strings.TrimSpace(string(comm))
		if !slices.Contains(names, name) {
			continue
		}
		hwm, ppid, err := procStatus(pid)
		if err != nil || ppid != self || zombie(p) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(bytes.TrimRight(cmdline, "\x00")), "\x00")
		out = append(out, child{pid: pid, comm: name, args: args, peakRSS: hwm})
	}
	return out
}

// folders returns the folders c's command line names for its data: etcd's
// --data-dir and kube-apiserver's --cert-dir, each inside its control
// plane's root (root.go).
func (c child) folders() []string {
	var out []string
	for _, a := range c.args {
		for _, flag := range []string{"--data-dir=", "--cert-dir="} {
			if dir, ok := strings.CutPrefix(a, flag); ok && dir != "" {
				out = append(out, dir)
			}
		}
	}
	return out
}

// AdoptOrphans makes this process the reaper of its descendants' orphans
// (Linux's PR_SET_CHILD_SUBREAPER) and returns a function that waits for
// the control-plane watchdogs it adopted to end, then kills every
// kube-apiserver and etcd among its children, reaps them and removes their
// control plane's folders, and the folders a child of this process made
// for a control plane and left when it died (childRootsLeft).
//
// A fuzzing coordinator calls it before its workers start, and the returned
// function once the run is over. A worker that crashes (Go's fuzzer kills a
// worker whose input runs for 10 s; a runtime fatal error cannot be caught)
// dies without stopping its control plane. Its watchdog then kills the
// control plane and removes its folder (internal/watchdog); this is for
// what that leaves, such as a worker killed together with its watchdog:
// adopted, the orphans are the coordinator's to end, instead of outliving
// the run. The caller must stop its own control plane first: the function
// kills whatever is left.
func AdoptOrphans() (cleanup func() error, err error) {
	const prSetChildSubreaper = 36 // linux/prctl.h
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return nil, fmt.Errorf("become the reaper of orphaned processes: %w", e)
	}
	return func() error {
		var errs []error
		// An adopted watchdog, whose worker has gone, kills that
		// worker's control plane and removes its folders on its own:
		// wait for it first, then end what it left.
		for _, c := range children(watchdogComm) {
			if watchdog.Mine(c.pid) {
				continue // this process's own, which waits for its Stop
			}
			var ws syscall.WaitStatus
			if _, err := syscall.Wait4(c.pid, &ws, 0, nil); err != nil {
				errs = append(errs, fmt.Errorf("wait for the watchdog (pid %d) of a crashed worker's control plane: %w", c.pid, err))
			} else if ws.Signaled() || ws.ExitStatus() != 0 {
				what := fmt.Sprintf("exit status %d", ws.ExitStatus())
				if ws.Signaled() {
					what = "killed by " + ws.Signal().String()
				}
				errs = append(errs, fmt.Errorf("the watchdog (pid %d) of a crashed worker's control plane did not finish (%s); ending what it left", c.pid, what))
			}
		}
		for _, c := range controlPlaneChildren() {
			_ = syscall.Kill(c.pid, syscall.SIGKILL)
			var ws syscall.WaitStatus
			if _, err := syscall.Wait4(c.pid, &ws, 0, nil); err != nil {
				errs = append(errs, fmt.Errorf("reap %s (pid %d): %w", c.comm, c.pid, err))
			}
			for _, dir := range c.folders() {
				errs = append(errs, removeRoot(dir))
			}
		}
		// A worker killed while its control plane started leaves a
		// root whose processes never ran, or were not found above.
		for _, root := range childRootsLeft() {
			errs = append(errs, removeRoot(filepath.Join(root, "etcd")))
		}
		return errors.Join(errs...)
	}, nil
}

// closeInheritedFiles marks every file this process inherited beyond
// stdin, stdout and stderr close-on-exec, so that kube-apiserver and etcd
// do not inherit them in turn. A parent that waits for such a file to
// close (a fuzzing coordinator reading its worker's pipe, a shell reading a
// command substitution) would otherwise wait for the control plane too,
// even after this process has gone. Go opens its own files close-on-exec,
// so only inherited ones change.
func closeInheritedFiles() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return // not Linux: nothing to learn the open files from
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

// zombie reports whether the process at procDir has exited and waits to be
// reaped, or is gone.
func zombie(procDir string) bool {
	stat, err := os.ReadFile(filepath.Join(procDir, "stat"))
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}
