// Package watchdog keeps a control plane from outliving the process that
// started it, however that process ends.
//
// envtest starts kube-apiserver and etcd each in a process group of its
// own, with no way to give them a parent-death signal, so a process killed
// outright (SIGKILL, a runtime fatal error, go test's -timeout) used to
// leave both running, and their folder (etcd's data: over 100 MB) in the
// temporary directory. Start runs a watchdog beside the process, before
// anything of its control plane exists; the contract:
//
//   - The watchdog makes the control plane's root folder and reports it
//     (Root), so that no folder exists before someone is there to remove it.
//   - It holds the read end of a pipe whose write end only the starting
//     process holds, close-on-exec: neither kube-apiserver, nor etcd, nor
//     anything else the process starts inherits it. The pipe reaches its
//     end when that process is gone, however it ended.
//   - Then the watchdog kills every process whose command line names a
//     path in the root, with its process group, waits for each to exit
//     (a pidfd, woken by the kernel), removes the root and the folder the
//     root's elsewhere file names (RemoveRoot), says so on stderr, and
//     exits.
//   - Stop(true), for a control plane that has stopped and whose folder is
//     gone, ends the watchdog at once and quietly; Stop(false) has it
//     sweep first, as above. Stop waits for it to exit.
//
// The watchdog runs in a process group of its own, so that a Ctrl-C at the
// terminal, which reaches the test's group, does not end it first; it
// ignores SIGINT, SIGTERM and SIGHUP, and exits once the pipe has told it
// what to do, always: it cannot outlive the process that started it by
// more than its sweep.
//
// The watchdog is the current binary, run again from /proc/self/exe (which
// works for a binary go test has already deleted) with RACEKIT_WATCHDOG=1:
// this package's init sees the variable and never returns. So every binary
// that links the harness (racekit, its tests' binaries, a user's test
// binary through package racekit) can be its own watchdog. The packages Go
// initializes before this one (its few imports, and some that sort before
// it) still run their init functions in the watchdog.
package watchdog
