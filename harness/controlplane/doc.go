// Package controlplane runs one kube-apiserver and its etcd, once per
// process, for every scenario of the process to share.
//
// Its contract:
//
//   - It knows no scenario and no command: it starts the processes from the
//     binaries internal/assets finds, installs CRDs, hands out users
//     (a client certificate per name), resolves resource names, and
//     compacts etcd.
//   - Nothing it starts outlives the process: Stop, SIGINT and SIGTERM stop
//     kube-apiserver and etcd, the spawned controllers that Track noted
//     are killed, each with all it started, and a watchdog process
//     (internal/watchdog) kills what is left and removes the control
//     plane's folder when the process dies without stopping it.
//   - Readers of old revisions (RevisionHolds) keep a compaction waiting
//     until they are done, so that no scenario loses a resourceVersion it
//     means to send.
package controlplane
