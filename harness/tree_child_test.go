package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The children (childEnv) that make the tree a daemon makes of itself, for
// the tests of spawned trees (tree_test.go) and racekit's leak tests:
//
//   - tree is the program a scenario spawns: it runs tree-middle, waits
//     for it to exit, then for SIGTERM, and prints "stopped";
//   - tree-middle starts tree-daemon in a session of its own (setsid) and
//     exits at once, so that the daemon is an orphan: the double fork;
//   - tree-daemon ignores SIGTERM, waits for tree-middle to have exited
//     (the end of a pipe tree-middle held), starts tree-leaf in a process
//     group of its own, writes "DAEMON-PID LEAF-PID" to the file
//     $TREE_PIDS (relative to the work folder), then says so on the wire
//     with one list of the namespace's ConfigMaps, and blocks;
//   - tree-leaf ignores SIGTERM and blocks.
//
// Neither the daemon nor the leaf is in the program's process group, and
// neither stops when asked: only a kill of the whole tree ends them.
const (
	treeChild       = "tree"
	treeMiddleChild = "tree-middle"
	treeDaemonChild = "tree-daemon"
	treeLeafChild   = "tree-leaf"
)

// runTreeChild runs the child its environment names, if it is one of
// these, and reports whether it was.
func runTreeChild() bool {
	var err error
	switch os.Getenv(childEnv) {
	case treeChild:
		err = treeProgram()
	case treeMiddleChild:
		err = treeMiddle()
	case treeDaemonChild:
		err = treeDaemon()
	case treeLeafChild:
		signal.Ignore(syscall.SIGTERM)
		blockForever()
	default:
		return false
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Getenv(childEnv), err)
		os.Exit(1)
	}
	return true
}

func treeProgram() error {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	if err := treeSelf(treeMiddleChild).Run(); err != nil {
		return err
	}
	fmt.Println("the daemon runs on its own")
	<-term
	fmt.Println("stopped")
	return nil
}

func treeMiddle() error {
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	d := treeSelf(treeDaemonChild)
	d.ExtraFiles = []*os.File{pr}
	d.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := d.Start(); err != nil {
		return err
	}
	// pw is held until this process exits, which the daemon waits for.
	runtime.KeepAlive(pw)
	return nil
}

func treeDaemon() error {
	signal.Ignore(syscall.SIGTERM)
	if _, err := io.Copy(io.Discard, os.NewFile(3, "middle")); err != nil {
		return err
	}
	leaf := treeSelf(treeLeafChild)
	leaf.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := leaf.Start(); err != nil {
		return err
	}
	file := os.Getenv("TREE_PIDS")
	if file == "" {
		return fmt.Errorf("no $TREE_PIDS: spawn the tree with TREE_PIDS=FILE")
	}
	// Renamed into place, so that a reader never sees half of it.
	tmp := filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".tmp")
	if err := os.WriteFile(tmp, fmt.Appendf(nil, "%d %d\n", os.Getpid(), leaf.Process.Pid), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, file); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := kube.CoreV1().ConfigMaps(os.Getenv("NAMESPACE")).List(context.Background(), metav1.ListOptions{}); err != nil {
		return err
	}
	blockForever()
	return nil
}

// treeSelf returns a command that runs this test binary as the child
// named, with this process's environment, folder and output.
func treeSelf(child string) *exec.Cmd {
	cmd := exec.Command("/proc/self/exe")
	cmd.Args[0] = os.Args[0]
	cmd.Env = append(os.Environ(), childEnv+"="+child)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd
}

// blockForever waits for a signal nobody sends: until the process is
// killed. A wait on a channel nothing can send on would be a deadlock the
// runtime ends the process for.
func blockForever() {
	never := make(chan os.Signal, 1)
	signal.Notify(never, syscall.SIGUSR2)
	<-never
	os.Exit(1)
}
