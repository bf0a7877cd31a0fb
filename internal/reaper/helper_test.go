package reaper

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The tests run this test binary again as the processes of a tree
// (helperEnv names which), the tree a daemon makes of itself:
//
//   - program, the program the reaper starts, runs middle and waits for
//     it to exit, then for SIGTERM (exit 0) or, with helperThen=stdin, for
//     the end of its stdin (exit 3);
//   - middle starts daemon in a session of its own (setsid) and exits at
//     once, so that daemon is an orphan: the double fork;
//   - daemon ignores SIGTERM, waits for middle to have exited (the end of
//     a pipe middle held) and for the kernel to have given it a new
//     parent (adopted), starts leaf in a process group of its own, and
//     prints "pids DAEMON LEAF", then blocks;
//   - leaf ignores SIGTERM and blocks.
//
// And as ready, which prints "ready" and blocks; and as starter: a process that starts program under a reaper, with its
// own stdout as the tree's, prints "program PID", and blocks until the
// test kills it.
const (
	helperEnv  = "RACEKIT_REAPER_TEST_HELPER"
	helperThen = "RACEKIT_REAPER_TEST_THEN"
	// helperMiddle is middle's pid, for the daemon, which waits until it
	// has another parent.
	helperMiddle = "RACEKIT_REAPER_TEST_MIDDLE"
)

func TestMain(m *testing.M) {
	if h := os.Getenv(helperEnv); h != "" {
		os.Exit(helper(h))
	}
	os.Exit(m.Run())
}

func helper(mode string) int {
	switch mode {
	case "program":
		// Before the daemon prints its pids, which tells the test it
		// may send SIGTERM.
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		if err := self("middle").Run(); err != nil {
			fmt.Fprintf(os.Stderr, "program: middle: %v\n", err)
			return 1
		}
		if os.Getenv(helperThen) == "stdin" {
			_, _ = io.Copy(io.Discard, os.Stdin)
			return 3
		}
		<-term
		return 0
	case "middle":
		pr, pw, err := os.Pipe()
		if err != nil {
			fmt.Fprintf(os.Stderr, "middle: %v\n", err)
			return 1
		}
		d := self("daemon")
		d.Env = append(d.Env, helperMiddle+"="+strconv.Itoa(os.Getpid()))
		d.ExtraFiles = []*os.File{pr}
		d.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := d.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "middle: daemon: %v\n", err)
			return 1
		}
		// pw is held until this process exits, which daemon waits for.
		runtime.KeepAlive(pw)
		return 0
	case "daemon":
		signal.Ignore(syscall.SIGTERM)
		// The kernel signals each reparenting once asked to (the parent
		// death signal), after it has set the new parent: asked before
		// the parent is read, no reparenting goes unseen.
		adopted := make(chan os.Signal, 8)
		signal.Notify(adopted, syscall.SIGUSR1)
		if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGUSR1), 0, 0, 0); err != nil {
			fmt.Fprintf(os.Stderr, "daemon: prctl: %v\n", err)
			return 1
		}
		_, _ = io.Copy(io.Discard, os.NewFile(3, "middle"))
		// The pipe ends when middle's files close, which comes before the
		// kernel gives middle's children a new parent: on a slow machine
		// the test read middle as the daemon's parent. A reparenting to
		// another of middle's threads as they exit leaves middle the
		// parent, and is signalled too.
		for middle := os.Getenv(helperMiddle); strconv.Itoa(os.Getppid()) == middle; {
			<-adopted
		}
		leaf := self("leaf")
		leaf.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := leaf.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "daemon: leaf: %v\n", err)
			return 1
		}
		fmt.Printf("pids %d %d\n", os.Getpid(), leaf.Process.Pid)
		block()
	case "ready":
		fmt.Println("ready")
		block()
	case "leaf":
		signal.Ignore(syscall.SIGTERM)
		block()
	case "starter":
		tree, err := Start(self("program"))
		if err != nil {
			fmt.Fprintf(os.Stderr, "starter: %v\n", err)
			return 1
		}
		fmt.Printf("program %d\n", tree.Pid())
		block()
	}
	fmt.Fprintf(os.Stderr, "unknown %s=%s\n", helperEnv, mode)
	return 2
}

// self returns a command that runs this test binary as the helper mode,
// with this process's stdin, stdout and stderr.
func self(mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd
}

// block waits for a signal nobody sends: until the process is killed. A
// wait on a channel nothing can send on would be a deadlock the runtime
// ends the process for.
func block() {
	never := make(chan os.Signal, 1)
	signal.Notify(never, syscall.SIGUSR2)
	<-never
	os.Exit(1)
}

// readPids reads the daemon's "pids DAEMON LEAF" line from r.
func readPids(t *testing.T, r *bufio.Reader) (daemon, leaf int) {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("read the daemon's pids: %v (read %q)", err, line)
	}
	if _, err := fmt.Sscanf(strings.TrimSpace(line), "pids %d %d", &daemon, &leaf); err != nil {
		t.Fatalf("want pids DAEMON LEAF, got %q: %v", line, err)
	}
	return daemon, leaf
}
