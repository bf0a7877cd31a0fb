package watchdog

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// init turns this process into a watchdog when Start ran it: it never
// returns then.
func init() {
	if os.Getenv(envVar) == "1" {
		os.Exit(watch(os.Args))
	}
}

// watch is the watchdog: it makes the root, reports it, waits for the
// life pipe to say what to do, and returns the exit status.
func watch(args []string) int {
	setComm(Name)
	// Its end comes through the pipe alone. SIGPIPE ignored, a report
	// to a stderr nobody reads fails instead of killing it mid-sweep.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	if len(args) != 3 || !isOpen(lifeFD) || !isOpen(replyFD) {
		fmt.Fprintf(os.Stderr, "%s: want %s DIR PREFIX, with the pipes Start gives it as fd %d and %d; this process is run by package watchdog's Start only\n", Name, Name, lifeFD, replyFD)
		return 2
	}
	life, reply := os.NewFile(lifeFD, "life"), os.NewFile(replyFD, "reply")
	starter := os.Getppid()
	root, err := os.MkdirTemp(args[1], args[2]+"*")
	if err != nil {
		fmt.Fprintf(reply, "error %v\n", err)
		return 1
	}
	// If the reply cannot be written, the starter has gone: the read
	// below says so.
	fmt.Fprintf(reply, "%s%s\n", replyPrefix, root)
	reply.Close()

	var b [1]byte
	n, err := life.Read(b[:])
	switch {
	case n == 1 && b[0] == quit:
		return 0
	case n == 1 && b[0] == sweep:
		killed, err := sweepRoot(root)
		if len(killed) > 0 {
			fmt.Fprintf(os.Stderr, "racekit: the control plane in %s did not stop: its watchdog killed %s\n", root, list(killed))
		}
		return status(err)
	case n == 0 && err == io.EOF:
		killed, err := sweepRoot(root)
		what := "found none of its processes left"
		if len(killed) > 0 {
			what = "killed " + list(killed)
		}
		fmt.Fprintf(os.Stderr, "racekit: the process (pid %d) that started the control plane in %s ended without stopping it; its watchdog %s, and removed the folder\n", starter, root, what)
		return status(err)
	default:
		fmt.Fprintf(os.Stderr, "%s: read from the process that started the control plane in %s: %d bytes (%q), %v; sweeping it\n", Name, root, n, b[:n], err)
		_, err = sweepRoot(root)
		return status(err)
	}
}

// list joins items as a sentence does: "a", "a and b", "a, b and c".
func list(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// status reports err, if any, and returns the exit status for it.
func status(err error) int {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", Name, err)
		return 1
	}
	return 0
}

// setComm names the process s where ps and top show the command, instead
// of "exe" (from /proc/self/exe). Package init runs on the main thread,
// whose name is the process's.
func setComm(s string) {
	b := append([]byte(s), 0)
	_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0)
}

// isOpen reports whether fd is an open file of this process.
func isOpen(fd int) bool {
	var st syscall.Stat_t
	return syscall.Fstat(fd, &st) == nil
}
