package controlplane

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

// OnInterrupt registers f to run when the process is interrupted, after the
// control plane has stopped and before the process exits: a caller's own
// cleanup, which the exit would otherwise skip.
func (cp *ControlPlane) OnInterrupt(f func()) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.onInterrupt = append(cp.onInterrupt, f)
}

// Interrupted reports whether the process was interrupted: cp is stopping,
// or stopped, and the process is about to exit by the signal. What ran on
// cp meanwhile failed for that reason alone, and is no result to report.
func (cp *ControlPlane) Interrupted() bool {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.interrupted
}

// stopOnSignal stops cp and exits when the process is interrupted. envtest
// starts its processes in their own process group, so a Ctrl-C at the
// terminal never reaches them: without this, only the watchdog would end
// them, killed, after the process has gone; this kills them, as Stop with
// WithKillOnStop does, and runs the caller's cleanup (OnInterrupt). A
// graceful stop keeps nothing worth keeping (etcd's data goes with the
// folder), and kube-apiserver, with an exploration's controllers still
// watching it, drained for envtest's whole 20 s before it was killed
// anyway: an interrupted explore took that long to give the prompt back.
func stopOnSignal(cp *ControlPlane) {
	cp.signals = make(chan os.Signal, 1)
	signal.Notify(cp.signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		s, ok := <-cp.signals
		if !ok {
			return
		}
		cp.mu.Lock()
		cp.interrupted, cp.kill = true, true
		cp.mu.Unlock()
		fmt.Fprintf(os.Stderr, "racekit: %v: stopping the control plane\n", s)
		cp.starting.Lock() // let a start in progress finish, then stop it
		cp.killSpawned()
		_ = cp.Stop()
		cp.mu.Lock()
		fs := cp.onInterrupt
		cp.mu.Unlock()
		for i := len(fs) - 1; i >= 0; i-- {
			fs[i]()
		}
		exitBySignal(s)
	}()
}

// Track notes kill, which kills a process a scenario spawned and all it
// started, until the returned untrack is called, once the process has
// exited: kill runs on an interrupt and at Stop, so that no controller
// outlives the run.
func (cp *ControlPlane) Track(kill func()) (untrack func()) {
	cp.spawnMu.Lock()
	defer cp.spawnMu.Unlock()
	if cp.spawned == nil {
		cp.spawned = map[int]func(){}
	}
	cp.spawnN++
	id := cp.spawnN
	cp.spawned[id] = kill
	return func() {
		cp.spawnMu.Lock()
		defer cp.spawnMu.Unlock()
		delete(cp.spawned, id)
	}
}

// killSpawned kills every process scenarios spawned that is still
// running. The scenario that spawned one stops it gently when it ends;
// this is for a run that ends first.
func (cp *ControlPlane) killSpawned() {
	cp.spawnMu.Lock()
	defer cp.spawnMu.Unlock()
	for _, kill := range cp.spawned {
		kill()
	}
}

// exitBySignal ends the process the way s would have had nobody caught
// it, so that the parent sees a process killed by s: a shell reports 130
// for SIGINT and 143 for SIGTERM, and a fuzzing coordinator tells an
// interrupted worker from a crashed one by it.
func exitBySignal(s os.Signal) {
	sig, ok := s.(syscall.Signal)
	if !ok {
		os.Exit(1)
	}
	signal.Reset(sig)
	// Sent to this thread, the signal is delivered as tgkill returns, so
	// nothing below runs unless the signal is ignored (a process started
	// under nohup inherits SIGINT ignored).
	runtime.LockOSThread()
	_ = syscall.Tgkill(os.Getpid(), syscall.Gettid(), sig)
	os.Exit(128 + int(sig))
}
