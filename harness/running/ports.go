package running

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/racekit/racekit/harness/language"
)

// Many operators serve metrics or probes on a fixed port and have no flag
// to move it, so two scenarios that spawn one at the same time fail: the
// second cannot bind. spawn NAME ports=P1,P2 keeps such scenarios apart: a
// port is a resource of the run, held from the spawn that first needs it
// until the scenario ends, across the name's restarts and lives (a
// restarted operator binds the same port again, and no other run may take
// it in between).
//
// Two locks keep a port, in this order, both taken before the process
// starts:
//
//   - a turn in this process (portTurn): scenarios of one racekit process,
//     such as explore's runs or go test's parallel scenarios, queue for a
//     port one after another without a time limit, since every run that
//     holds one ends, bounded by its own waits;
//   - an exclusive flock on a file under the user's cache folder
//     (racekit/ports/PORT.lock), which every racekit process on the machine
//     shares: a scenario whose port another process holds waits, in the
//     kernel (flock blocks; nothing polls), at most spawn's within= (the
//     scenario's wait timeout by default), and then fails as unavailable
//     (language.ErrUnavailable), naming who holds it: the run could not
//     start, which explore counts n/a, never a finding.

// portsOption is spawn's own KEY=VALUE, which is no environment variable.
const portsOption = "ports"

// parsePorts reads the value of ports=: port numbers separated by commas,
// each once, in the order the locks are taken.
func parsePorts(v string) ([]int, error) {
	var ports []int
	for _, s := range strings.Split(v, ",") {
		p, err := strconv.Atoi(s)
		if err != nil || p < 1 || p > 65535 {
			return nil, language.UsageError("bad ports=%s: want port numbers (1 to 65535) separated by commas, such as ports=8080,8081", v)
		}
		if !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	// In one order for everyone, so that two scenarios that need the same
	// two ports never hold one each and wait for the other.
	slices.Sort(ports)
	return ports, nil
}

// heldPorts are the ports the scenario holds, by port, each with the name
// that holds it now and its locks, until the scenario ends.
type heldPorts struct {
	mu sync.Mutex
	by map[int]*portHold
	// ever are every port the scenario held, for explore (Ports).
	ever []int
}

// portHold is one port the scenario holds: the spawn name it holds it for
// now, the file whose flock keeps it from other processes, and its turn in
// this one.
type portHold struct {
	name string
	file *os.File
	turn *sync.Mutex
}

var heldKey = language.NewKey("ports", func(*language.Scenario) *heldPorts { return &heldPorts{by: map[int]*portHold{}} })

// portTurns are this process's turns of the ports, by port.
var portTurns = struct {
	mu sync.Mutex
	by map[int]*sync.Mutex
}{by: map[int]*sync.Mutex{}}

// portTurn returns the turn of port p in this process.
func portTurn(p int) *sync.Mutex {
	portTurns.mu.Lock()
	defer portTurns.mu.Unlock()
	t := portTurns.by[p]
	if t == nil {
		t = &sync.Mutex{}
		portTurns.by[p] = t
	}
	return t
}

// Ports returns the fixed ports sc's spawns held (spawn ... ports=),
// sorted: what runs of the same script would queue for.
func Ports(sc *language.Scenario) []int {
	held := heldKey.Peek(sc)
	if held == nil {
		return nil
	}
	held.mu.Lock()
	defer held.mu.Unlock()
	return slices.Clone(held.ever)
}

// PortsDir is the folder of the port locks: racekit/ports under the user's
// cache folder ($XDG_CACHE_HOME, or ~/.cache).
func PortsDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("the folder of the port locks: %w", err)
	}
	return filepath.Join(cache, "racekit", "ports"), nil
}

// lockPorts holds each of ports for spawn name, at pos, until the scenario
// ends: at once those the scenario holds already for name (its earlier
// life) or for a name that no longer runs; the others after their turn in
// this process and their flock, for which it waits at most within.
func lockPorts(sc *language.Scenario, name string, ports []int, pos string, within time.Duration) error {
	if len(ports) == 0 {
		return nil
	}
	held := heldKey.Of(sc)
	var need []int
	held.mu.Lock()
	for _, p := range ports {
		h, ok := held.by[p]
		switch {
		case !ok:
			need = append(need, p)
		case h.name != name && runs(sc, h.name):
			held.mu.Unlock()
			return language.UsageError("port %d is held by %s, which this scenario spawned with ports=%d and which still runs: it would wait for itself; halt %s first", p, h.name, p, h.name)
		}
	}
	for _, p := range ports {
		if h, ok := held.by[p]; ok {
			h.name = name
		}
	}
	first := len(held.by) == 0
	held.mu.Unlock()
	if len(need) == 0 {
		return nil
	}
	if first {
		sc.Defer(func() { releasePorts(held) })
	}
	dir, err := PortsDir()
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return fmt.Errorf("lock ports: %w", err)
	}
	holder := fmt.Sprintf("spawn %s of scenario %s, at %s (racekit process %d, since %s)", name, sc.Name, pos, os.Getpid(), time.Now().Format("15:04:05"))
	deadline := time.Now().Add(within)
	for _, p := range need {
		turn := portTurn(p)
		turn.Lock()
		path := filepath.Join(dir, strconv.Itoa(p)+".lock")
		f, err := lockPort(sc, path, time.Until(deadline))
		if errors.Is(err, errWaited) {
			err = fmt.Errorf("%w: port %d is still held after %v, by %s: scenarios that spawn with the same ports= run one at a time, and this one waited for its turn as long as spawn's within= (the scenario's wait timeout unless set) lets it", language.ErrUnavailable, p, within, describeHolder(path))
		}
		if err != nil {
			turn.Unlock()
			return err
		}
		// Who holds it, for a scenario that waits for it and gives up.
		_ = f.Truncate(0)
		_, _ = f.WriteAt([]byte(holder+"\n"), 0)
		held.mu.Lock()
		held.by[p] = &portHold{name: name, file: f, turn: turn}
		held.ever = append(held.ever, p)
		slices.Sort(held.ever)
		held.mu.Unlock()
	}
	return nil
}

// releasePorts lets every port held go, at the scenario's end, once what
// ran has been halted: nothing of the scenario binds them any more.
func releasePorts(held *heldPorts) {
	held.mu.Lock()
	defer held.mu.Unlock()
	for p, h := range held.by {
		unlock(h.file)
		h.turn.Unlock()
		delete(held.by, p)
	}
}

// runs reports whether what sc runs under name still runs.
func runs(sc *language.Scenario, name string) bool {
	r, ok := lifelineOf(sc, name)
	if !ok {
		return false
	}
	l := lastLife(sc, r)
	done, _ := l.ended()
	return !done && l.over() == ""
}

// lockPort opens path and takes its exclusive flock, waiting at most
// within, or until the scenario's context ends.
func lockPort(sc *language.Scenario, path string, within time.Duration) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock ports: %w", err)
	}
	fd := int(f.Fd())
	if err := flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		return f, nil
	} else if !errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// flock blocks until the holder lets go; it cannot be called off, so
	// a wait that gives up leaves it to a goroutine that lets the lock go
	// as soon as it has it.
	got := make(chan error, 1)
	go func() { got <- flock(fd, syscall.LOCK_EX) }()
	timer := time.NewTimer(within)
	defer timer.Stop()
	var gaveUp error
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return f, nil
	case <-timer.C:
		gaveUp = errWaited
	case <-sc.Context().Done():
		gaveUp = sc.Context().Err()
	}
	go func() {
		if err := <-got; err == nil {
			unlock(f)
			return
		}
		f.Close()
	}()
	return nil, gaveUp
}

// flock is syscall.Flock, called again when a signal interrupts it.
func flock(fd, how int) error {
	for {
		if err := syscall.Flock(fd, how); !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// unlock clears the holder noted in the lock file f and lets the lock go.
func unlock(f *os.File) {
	_ = f.Truncate(0)
	_ = flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

// describeHolder says who the lock file at path says holds it.
func describeHolder(path string) string {
	data, err := os.ReadFile(path)
	if s := strings.TrimSpace(string(data)); err == nil && s != "" {
		return s
	}
	return "a process that noted no name in " + path
}
