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
// second cannot bind. spawn NAME ports=P1,P2 keeps such scenarios apart:
// before the process starts, spawn takes a lock per port, an exclusive
// flock on a file under the user's cache folder (racekit/ports/PORT.lock),
// which every racekit process on the machine shares, and holds it until
// the process has exited. A scenario that needs a port another holds
// waits, in the kernel (flock blocks; nothing polls), at most the
// scenario's wait timeout, and then fails, saying who holds it.

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

// heldPorts are the ports the scenario's processes hold now, by port, with
// the name that holds each: a second process of the scenario that needs
// one would wait for the first forever.
type heldPorts struct {
	mu sync.Mutex
	by map[int]string
}

var heldKey = language.NewKey("ports", func(*language.Scenario) *heldPorts { return &heldPorts{by: map[int]string{}} })

// PortsDir is the folder of the port locks: racekit/ports under the user's
// cache folder ($XDG_CACHE_HOME, or ~/.cache).
func PortsDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("the folder of the port locks: %w", err)
	}
	return filepath.Join(cache, "racekit", "ports"), nil
}

// lockPorts takes the lock of each port for spawn name, which inv is, and
// returns what lets them go; it waits for a port another holds, at most
// the scenario's wait timeout.
func lockPorts(sc *language.Scenario, name string, ports []int, pos string) (release func(), err error) {
	if len(ports) == 0 {
		return func() {}, nil
	}
	held := heldKey.Of(sc)
	held.mu.Lock()
	for _, p := range ports {
		if other, ok := held.by[p]; ok {
			held.mu.Unlock()
			return nil, fmt.Errorf("port %d is held by %s, which this scenario spawned with ports=%d and which still runs: it would wait for itself; halt %s first", p, other, p, other)
		}
	}
	for _, p := range ports {
		held.by[p] = name
	}
	held.mu.Unlock()
	dir, err := PortsDir()
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	var locks []*os.File
	release = func() {
		for _, f := range locks {
			unlock(f)
		}
		held.mu.Lock()
		for _, p := range ports {
			delete(held.by, p)
		}
		held.mu.Unlock()
	}
	if err != nil {
		release()
		return nil, fmt.Errorf("lock ports: %w", err)
	}
	holder := fmt.Sprintf("spawn %s of scenario %s, at %s (racekit process %d, since %s)", name, sc.Name, pos, os.Getpid(), time.Now().Format("15:04:05"))
	within := waitTimeout(sc)
	deadline := time.Now().Add(within)
	for _, p := range ports {
		f, err := lockPort(sc, filepath.Join(dir, strconv.Itoa(p)+".lock"), time.Until(deadline))
		if errors.Is(err, errWaited) {
			err = fmt.Errorf("port %d is still held after %v, by %s: scenarios that spawn with the same ports= run one at a time, and this one waited for its turn as long as await would (within=, the scenario's wait timeout)", p, within, describeHolder(filepath.Join(dir, strconv.Itoa(p)+".lock")))
		}
		if err != nil {
			release()
			return nil, err
		}
		locks = append(locks, f)
		// Who holds it, for a scenario that waits for it and gives up.
		_ = f.Truncate(0)
		_, _ = f.WriteAt([]byte(holder+"\n"), 0)
	}
	return release, nil
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
