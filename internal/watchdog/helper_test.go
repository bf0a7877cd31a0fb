package watchdog

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The tests run this test binary again as a helper that stands for a
// process with control planes (helperEnv set): for each, it starts a
// watchdog, makes the folders the harness makes, and starts a stand-in for
// etcd, a shell whose command line names ROOT/etcd and which has started a
// sleep in its process group. It prints "plane ROOT SHELL-PID SLEEP-PID"
// for each and "ready", then does what helperThen says: block (reading
// stdin, which the test keeps open), or stop its watchdogs.
const (
	helperEnv    = "RACEKIT_WATCHDOG_TEST_PLANES" // how many control planes
	helperThen   = "RACEKIT_WATCHDOG_TEST_THEN"   // block, stop-clean or stop-sweep
	helperStdin  = "RACEKIT_WATCHDOG_TEST_STDIN"  // 1: read a line from stdin first
	helperPrefix = "racekit-controlplane-"
)

func TestMain(m *testing.M) {
	if n := os.Getenv(helperEnv); n != "" {
		os.Exit(helper(n))
	}
	os.Exit(m.Run())
}

func helper(planes string) int {
	n, err := strconv.Atoi(planes)
	if err != nil {
		fmt.Fprintf(os.Stderr, "helper: %s=%q: %v\n", helperEnv, planes, err)
		return 2
	}
	if os.Getenv(helperStdin) == "1" {
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			fmt.Fprintf(os.Stderr, "helper: read stdin: %v\n", err)
			return 2
		}
	}
	var dogs []*Watchdog
	for range n {
		w, err := startPlane()
		if err != nil {
			fmt.Fprintf(os.Stderr, "helper: %v\n", err)
			return 1
		}
		dogs = append(dogs, w)
	}
	fmt.Println("ready")
	switch then := os.Getenv(helperThen); then {
	case "block":
		// Until the test kills it. A blocked read, unlike select {},
		// is no deadlock for the runtime to end the process on.
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	case "stop-clean", "stop-sweep":
		for _, w := range dogs {
			if err := w.Stop(then == "stop-clean"); err != nil {
				fmt.Fprintf(os.Stderr, "helper: stop: %v\n", err)
				return 1
			}
		}
		fmt.Println("stopped")
		return 0
	default:
		fmt.Fprintf(os.Stderr, "helper: %s=%q: want block, stop-clean or stop-sweep\n", helperThen, then)
		return 2
	}
}

// startPlane starts a watchdog and what stands for its control plane.
func startPlane() (*Watchdog, error) {
	w, err := Start(os.TempDir(), helperPrefix)
	if err != nil {
		return nil, err
	}
	root := w.Root()
	if err := os.Mkdir(filepath.Join(root, "etcd"), 0o700); err != nil {
		return nil, err
	}
	certs, err := os.MkdirTemp("", elsewherePrefix)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(root, ElsewhereFile), []byte(certs), 0o600); err != nil {
		return nil, err
	}
	sh := exec.Command("/bin/sh", "-c", `sleep 600 & echo $!; wait`, "--data-dir="+filepath.Join(root, "etcd"))
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := sh.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := sh.Start(); err != nil {
		return nil, err
	}
	sleep, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("read the sleep's pid: %w", err)
	}
	fmt.Printf("plane %s %d %s\n", root, sh.Process.Pid, strings.TrimSpace(sleep))
	return w, nil
}
