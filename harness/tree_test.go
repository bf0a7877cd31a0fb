package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
)

// TestSpawnedTrees runs the scripts under testdata/trees, each of which
// spawns the tree child (tree_child_test.go): a program whose daemon
// double forked into a session of its own and ignores SIGTERM, with a
// child of its own in another process group. The scripts check, with
// tree-gone, that crash, halt and restart leave none of a tree's processes
// running, and that they leave another spawn's tree alone; once each
// script has ended, the test checks that the end of the scenario left
// none of any tree it watched running.
func TestSpawnedTrees(t *testing.T) {
	files, err := filepath.Glob("testdata/trees/*.txtar")
	assert.NilError(t, err)
	assert.Assert(t, len(files) > 0)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			w := &treeWatch{}
			t.Cleanup(w.close)
			res := RunFiles(context.Background(), controlPlane(t), ScriptOptions{Files: []string{file}, Commands: w.commands()})
			assert.Equal(t, len(res), 1)
			assert.Assert(t, res[0].Passed, "the script failed:\n%s", res[0].Log)
			assert.Assert(t, w.watched() > 0, "the script watched no tree: it checks nothing")
			left := w.running()
			assert.Assert(t, len(left) == 0, "processes of a spawned tree outlived the scenario:\n%s\nits log:\n%s", strings.Join(left, "\n"), res[0].Log)
		})
	}
}

// treeWatch holds the processes of the trees a script watched, by the
// name tree-watch gave them, each by a pidfd: a process ID can be reused
// once its process is reaped, a pidfd cannot, and it becomes readable when
// its process exits.
type treeWatch struct {
	mu    sync.Mutex
	trees map[string][]watched
}

// watched is one process of a tree.
type watched struct {
	what string // daemon, leaf
	pid  int
	fd   int
}

func (p watched) String() string { return fmt.Sprintf("%s (pid %d)", p.what, p.pid) }

// exited reports whether p has exited, now.
func (p watched) exited() bool {
	fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0
}

// commands are the test's own scenario commands.
func (w *treeWatch) commands() []*Command {
	return []*Command{
		{
			Name: "tree-watch", Args: "NAME FILE", Group: "assert", MinArgs: 2, MaxArgs: 2,
			Summary: "watch, as NAME, the processes whose pids FILE holds (the tree child's daemon and leaf), which must run (tests only)",
			Run:     w.watch,
		},
		{
			Name: "tree-gone", Args: "NAME", Group: "assert", MinArgs: 1, MaxArgs: 1, Negation: NegSelf,
			Summary: "every process watched as NAME has exited; with !, every one runs (tests only)",
			Run:     w.gone,
		},
	}
}

func (w *treeWatch) watch(sc *Scenario, inv Invocation) error {
	name, file := inv.Args[0], inv.Args[1]
	data, err := os.ReadFile(filepath.Join(sc.Dir, file))
	if err != nil {
		return err
	}
	var daemon, leaf int
	if _, err := fmt.Sscanf(string(data), "%d %d", &daemon, &leaf); err != nil {
		return fmt.Errorf("%s: want DAEMON-PID LEAF-PID, got %q: %w", file, data, err)
	}
	for _, p := range []watched{{what: "daemon", pid: daemon}, {what: "leaf", pid: leaf}} {
		fd, err := unix.PidfdOpen(p.pid, 0)
		if err != nil {
			return fmt.Errorf("the tree's %s does not run: pidfd_open: %w", p, err)
		}
		p.fd = fd
		w.add(name, p)
		if p.exited() {
			return fmt.Errorf("the tree's %s does not run: it has exited", p)
		}
	}
	return nil
}

// add notes p as a process of the tree name.
func (w *treeWatch) add(name string, p watched) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.trees == nil {
		w.trees = map[string][]watched{}
	}
	w.trees[name] = append(w.trees[name], p)
}

func (w *treeWatch) gone(_ *Scenario, inv Invocation) error {
	w.mu.Lock()
	procs, ok := w.trees[inv.Args[0]]
	w.mu.Unlock()
	if !ok {
		return fmt.Errorf("no tree watched as %s: tree-watch %s FILE first", inv.Args[0], inv.Args[0])
	}
	var running, exited []string
	for _, p := range procs {
		if p.exited() {
			exited = append(exited, p.String())
		} else {
			running = append(running, p.String())
		}
	}
	switch {
	case !inv.Neg && len(running) > 0:
		return fmt.Errorf("of the tree %s, %s still run", inv.Args[0], strings.Join(running, " and "))
	case inv.Neg && len(exited) > 0:
		return fmt.Errorf("of the tree %s, %s exited", inv.Args[0], strings.Join(exited, " and "))
	}
	return nil
}

// watched returns how many processes the script watched.
func (w *treeWatch) watched() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, procs := range w.trees {
		n += len(procs)
	}
	return n
}

// running returns the watched processes that run, by tree.
func (w *treeWatch) running() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for name, procs := range w.trees {
		for _, p := range procs {
			if !p.exited() {
				out = append(out, name+": "+p.String())
			}
		}
	}
	return out
}

// close kills what a failed test left running, and closes the pidfds.
func (w *treeWatch) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, procs := range w.trees {
		for _, p := range procs {
			if err := unix.PidfdSendSignal(p.fd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
				fmt.Fprintf(os.Stderr, "kill %s: %v\n", p, err)
			}
			unix.Close(p.fd)
		}
	}
}
