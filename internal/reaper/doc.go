// Package reaper runs a program so that nothing it starts outlives it:
// not its process group, and not a child that left the group, double
// forked, called setsid or ignores SIGTERM.
//
// A process group holds only what stays in it, and a parent-death signal
// reaches only a direct child: a program's child that calls setsid, or
// whose parent exits first (a daemon's double fork), is reparented to
// init and lives on. Start runs the program under a reaper of its own, a
// process that the kernel makes the parent of every orphan of the tree
// (Linux's PR_SET_CHILD_SUBREAPER, which needs no privilege). The
// contract:
//
//   - The reaper is the program's parent, and every process of the tree
//     whose parent dies becomes its child: the tree is exactly the
//     reaper's descendants, so several trees in one process (scenarios
//     that spawn at once) never mix, and nothing in the environment or
//     the command line, which a process can change, says which tree a
//     process belongs to.
//   - The program leads a process group of its own. Terminate sends
//     SIGTERM to that group; Kill sends SIGKILL to it and to every
//     process of the tree.
//   - When the program has exited, however it ended, the reaper kills
//     every process of the tree that is left, reaps each, and only then
//     exits, with the program's status (its exit code, or the signal it
//     died of). Wait returns when the reaper has exited: the whole tree is
//     gone then, not merely dying. While the program runs, the reaper
//     reaps the orphans that exit, so none lingers as a zombie.
//   - The reaper holds the read end of a pipe whose write end only the
//     starting process holds, close-on-exec. When the pipe ends, because
//     that process is gone however it ended (SIGKILL included), the
//     reaper kills the tree as Kill does.
//   - The reaper also holds the starting process's stderr until it
//     exits, so that whoever reads that process's output to its end (a
//     shell, go test, a leak test) knows that no tree it started is left.
//   - Every wait is on the kernel's word: a read of the pipe, waitid for
//     the reaper's children, the reaper's exit. Nothing sleeps or polls.
//
// PR_SET_CHILD_SUBREAPER is the one choice that works unprivileged on
// every Linux since 3.4: a cgroup would find the tree as well, but an
// ordinary user may create one only where systemd delegated a subtree,
// which a shell or a CI job usually lacks; a walk of /proc from the
// program's pid loses a process the moment its parent exits, since its
// parent is then init. A subreaper in the starting process itself would
// lose the lineage the same way: its adopted orphans would belong to no
// particular program, and it would die with that process, leaving them
// to init. The reaper is one more process per program, and the
// program's parent.
//
// The reaper is the current binary, run again from /proc/self/exe with
// RACEKIT_REAPER=1 (removed from the program's environment): this
// package's init sees the variable and never returns, as
// internal/watchdog's does. So every binary that links the harness can be
// its own reaper.
package reaper
