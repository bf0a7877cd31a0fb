package watchdog

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The protocol between Start and the watchdog. The watchdog runs as
// "racekit-watchdog DIR PREFIX", with envVar set, the life pipe's read end
// as fd 3 and the reply pipe's write end as fd 4. It makes its root with
// os.MkdirTemp(DIR, PREFIX+"*"), writes "root PATH\n" (or "error
// MESSAGE\n") on fd 4 and closes it, then reads one byte from fd 3: quit
// or sweep, or the end of the pipe when the process that started it has
// gone.
const (
	envVar           = "RACEKIT_WATCHDOG"
	quit        byte = 'q'
	sweep       byte = 's'
	lifeFD           = 3
	replyFD          = 4
	replyPrefix      = "root "
)

// Name is the watchdog's command: its argv[0], and, cut to the kernel's 15
// bytes, what /proc/PID/comm shows.
const Name = "racekit-watchdog"

// started holds the process IDs of the watchdogs this process started and
// has not stopped (Mine).
var started sync.Map

// Mine reports whether pid is a watchdog this process started and has not
// stopped. A process that adopts orphans (a fuzzing coordinator) waits for
// the watchdogs it adopted, whose starters have gone, to end; never for
// its own, which wait for it.
func Mine(pid int) bool {
	_, ok := started.Load(pid)
	return ok
}

// replyBound bounds how long Start waits for the watchdog to report its
// folder: a guard against a watchdog that hangs as it starts, not a speed
// target (it reports in milliseconds).
const replyBound = 30 * time.Second

// Watchdog is the handle the starting process keeps on the watchdog of one
// control plane.
type Watchdog struct {
	root string
	// life is the write end of the pipe the watchdog reads; closing it
	// without a byte is what the end of this process does.
	life *os.File
	cmd  *exec.Cmd
	once sync.Once
	err  error
}

// Start starts a watchdog, which makes a folder in dir named prefix and a
// random suffix, and returns once it has, or with an error saying why it
// could not. Stop it when the control plane has stopped.
//
// Start must run before the control plane's processes, and the caller must
// have marked every file it inherited close-on-exec (the watchdog would
// otherwise hold them open, and whoever waits for their end would wait for
// the watchdog too).
func Start(dir, prefix string) (*Watchdog, error) {
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start the control plane's watchdog: %w", err)
	}
	replyR, replyW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		lifeW.Close()
		return nil, fmt.Errorf("start the control plane's watchdog: %w", err)
	}
	defer replyR.Close()
	cmd := &exec.Cmd{
		Path: "/proc/self/exe",
		Args: []string{Name, dir, prefix},
		Env:  watchdogEnv(),
		// Its report of a sweep goes where this process's errors go.
		Stderr:     os.Stderr,
		ExtraFiles: []*os.File{lifeR, replyW},
		// Not in this process's group, which a Ctrl-C at the terminal
		// reaches.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	err = cmd.Start()
	lifeR.Close()
	replyW.Close()
	if err != nil {
		lifeW.Close()
		return nil, fmt.Errorf("start the control plane's watchdog: %w", err)
	}
	_ = replyR.SetReadDeadline(time.Now().Add(replyBound))
	line, rerr := bufio.NewReader(replyR).ReadString('\n')
	root, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), replyPrefix)
	if rerr != nil || !ok || root == "" {
		what := strings.TrimSpace(strings.TrimPrefix(line, "error "))
		if what == "" {
			what = fmt.Sprintf("it reported nothing (%v)", rerr)
		}
		// At the end of the pipe it removes what it made, if anything;
		// one that hangs as it starts is killed.
		lifeW.Close()
		if errors.Is(rerr, os.ErrDeadlineExceeded) {
			_ = cmd.Process.Kill()
		}
		_ = cmd.Wait()
		return nil, fmt.Errorf("the control plane's watchdog made no folder in %s: %s", dir, what)
	}
	started.Store(cmd.Process.Pid, true)
	return &Watchdog{root: root, life: lifeW, cmd: cmd}, nil
}

// watchdogEnv is this process's environment, which the binary may need to
// start (a cgo binary's library path), with envVar set; without
// GOCOVERDIR, since the watchdog's exit must not add to a coverage profile;
// and with atexit_sleep_ms=0 in GORACE: built with the race detector, a
// binary sleeps for a second as it exits, to let other goroutines report
// races (the watchdog has none), and Stop waits for that exit.
func watchdogEnv() []string {
	var env []string
	race := "atexit_sleep_ms=0"
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case envVar, "GOCOVERDIR":
		case "GORACE":
			race = v + " " + race
		default:
			env = append(env, kv)
		}
	}
	return append(env, "GORACE="+race, envVar+"=1")
}

// Root returns the control plane's root folder, which the watchdog made.
func (w *Watchdog) Root() string { return w.root }

// Stop ends the watchdog and waits for it to exit. clean says that the
// control plane has stopped and the root is gone: the watchdog exits at
// once and quietly. Otherwise it first kills what still runs from the root
// and removes it. Stop is safe to call more than once.
func (w *Watchdog) Stop(clean bool) error {
	w.once.Do(func() {
		b := sweep
		if clean {
			b = quit
		}
		var errs []error
		if _, err := w.life.Write([]byte{b}); err != nil {
			errs = append(errs, fmt.Errorf("tell the control plane's watchdog to stop: %w", err))
		}
		errs = append(errs, w.life.Close())
		if err := w.cmd.Wait(); err != nil {
			errs = append(errs, fmt.Errorf("the control plane's watchdog: %w", err))
		}
		started.Delete(w.cmd.Process.Pid)
		w.err = errors.Join(errs...)
	})
	return w.err
}
