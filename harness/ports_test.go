package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/running"
)

// meeting lets scenarios that run at once wait for each other at named
// points (test-meet NAME N), so that a test can be sure two scenarios
// overlap: a scenario that has ended counts as having reached every
// point, so that one that fails early does not keep the others waiting.
type meeting struct {
	mu      sync.Mutex
	reached map[*Scenario]map[string]bool
	ended   map[*Scenario]bool
	changed chan struct{}
}

func newMeeting() *meeting {
	return &meeting{reached: map[*Scenario]map[string]bool{}, ended: map[*Scenario]bool{}, changed: make(chan struct{})}
}

// meetWait bounds test-meet; a scenario that reaches it has failed.
const meetWait = 30 * time.Second

// command is test-meet NAME N: wait until N scenarios have reached NAME
// or ended.
func (m *meeting) command() *Command {
	return &Command{
		Name: "test-meet", Args: "NAME N", Group: "run", MinArgs: 2, MaxArgs: 2,
		Summary: "wait until N scenarios have reached test-meet NAME, or ended",
		Run: func(sc *Scenario, inv Invocation) error {
			n, err := strconv.Atoi(inv.Args[1])
			if err != nil {
				return language.UsageError("bad N %q", inv.Args[1])
			}
			m.reach(sc, inv.Args[0])
			timer := time.NewTimer(meetWait)
			defer timer.Stop()
			for {
				m.mu.Lock()
				got, changed := m.count(inv.Args[0]), m.changed
				m.mu.Unlock()
				if got >= n {
					return nil
				}
				select {
				case <-changed:
				case <-timer.C:
					return fmt.Errorf("only %d of %d scenarios reached %s within %v: run the test with -parallel 2 or more", got, n, inv.Args[0], meetWait)
				}
			}
		},
	}
}

// reach notes that sc reached point, and that sc, once ended, has reached
// every point.
func (m *meeting) reach(sc *Scenario, point string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.reached[sc] == nil {
		m.reached[sc] = map[string]bool{}
		sc.Defer(func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.ended[sc] = true
			m.broadcast()
		})
	}
	m.reached[sc][point] = true
	m.broadcast()
}

// count is how many scenarios reached point or ended; the caller holds mu.
func (m *meeting) count(point string) int {
	n := 0
	for sc, points := range m.reached {
		if points[point] || m.ended[sc] {
			n++
		}
	}
	return n
}

func (m *meeting) broadcast() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// runTogether runs file twice at once, with test-meet, and returns the two
// results.
func runTogether(t *testing.T, file string, opts ScriptOptions) []Result {
	t.Helper()
	cp := controlPlane(t)
	opts.Commands = append(opts.Commands, newMeeting().command())
	opts.Files = []string{file}
	results := make([]Result, 2)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := RunFiles(context.Background(), cp, opts)
			assert.Check(t, len(res) == 1)
			results[i] = res[0]
		}()
	}
	wg.Wait()
	return results
}

// TestPortsKeepScenariosApart runs two scenarios at once that spawn a
// program that binds one fixed port: without ports= one of them fails,
// the address being in use; with ports= the second waits for the first's
// program to exit, and both pass.
func TestPortsKeepScenariosApart(t *testing.T) {
	t.Run("without ports=", func(t *testing.T) {
		results := runTogether(t, "testdata/ports/unlocked.txtar", ScriptOptions{})
		passed, failed := 0, ""
		for _, r := range results {
			if r.Passed {
				passed++
			} else {
				failed = r.Log
			}
		}
		assert.Equal(t, passed, 1, "want one scenario to pass and one to fail:\n%s\n%s", results[0].Log, results[1].Log)
		assert.Assert(t, regexp.MustCompile(`process server ended on its own: .*exit status 1(.|\n)*address already in use`).MatchString(failed), "%s", failed)
	})
	t.Run("with ports=", func(t *testing.T) {
		for _, r := range runTogether(t, "testdata/ports/locked.txtar", ScriptOptions{}) {
			assert.Assert(t, r.Passed, "the script failed:\n%s", r.Log)
		}
	})
}

// TestPortsWaitBounded holds a port's lock as another racekit process
// would, and checks that a scenario that needs the port waits no longer
// than its wait timeout, and then fails naming who holds it.
func TestPortsWaitBounded(t *testing.T) {
	dir, err := running.PortsDir()
	assert.NilError(t, err)
	assert.NilError(t, os.MkdirAll(dir, 0o755))
	f, err := os.OpenFile(filepath.Join(dir, "47914.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	assert.NilError(t, err)
	defer f.Close()
	assert.NilError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	assert.NilError(t, f.Truncate(0))
	_, err = f.WriteAt([]byte("spawn web of scenario elsewhere, at elsewhere.txtar:3\n"), 0)
	assert.NilError(t, err)

	file := filepath.Join(t.TempDir(), "held.txtar")
	assert.NilError(t, os.WriteFile(file, []byte("# A port another holds.\nspawn server ports=47914 RACEKIT_HARNESS_CHILD=binder BIND_PORT=47914 -- harness.test\n"), 0o644))
	res := RunFiles(context.Background(), controlPlane(t), ScriptOptions{Files: []string{file}, WaitTimeout: 300 * time.Millisecond})
	assert.Equal(t, len(res), 1)
	assert.Assert(t, !res[0].Passed)
	want := `held.txtar:2: spawn server ports=47914 .*: port 47914 is still held after 300ms, by spawn web of scenario elsewhere, at elsewhere.txtar:3: scenarios that spawn with the same ports= run one at a time`
	assert.Assert(t, regexp.MustCompile(want).MatchString(res[0].Log), "%s", res[0].Log)
	// The run could not start: no claim failed, and explore counts it n/a.
	assert.Assert(t, len(res[0].Failures) == 1 && res[0].Failures[0].Unavailable, "%+v", res[0].Failures)

	// within= on the line bounds the wait, whatever the scenario's wait
	// timeout.
	assert.NilError(t, os.WriteFile(file, []byte("# A port another holds.\nspawn server ports=47914 within=200ms RACEKIT_HARNESS_CHILD=binder BIND_PORT=47914 -- harness.test\n"), 0o644))
	res = RunFiles(context.Background(), controlPlane(t), ScriptOptions{Files: []string{file}, WaitTimeout: time.Hour})
	assert.Assert(t, !res[0].Passed)
	assert.Assert(t, regexp.MustCompile(`port 47914 is still held after 200ms`).MatchString(res[0].Log), "%s", res[0].Log)
}

// TestPortsHeldForTheRun checks that a port is the run's from the spawn
// that first needs it until the scenario ends: across a restart, in which
// another racekit process could otherwise take it, and after a halt, and
// that it is free once the scenario has ended.
func TestPortsHeldForTheRun(t *testing.T) {
	const port = 47916
	dir, err := running.PortsDir()
	assert.NilError(t, err)
	lockFile := filepath.Join(dir, strconv.Itoa(port)+".lock")
	// free reports whether another process could take the port's lock now.
	free := func() bool {
		f, err := os.OpenFile(lockFile, os.O_RDWR|os.O_CREATE, 0o644)
		assert.NilError(t, err)
		defer f.Close()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			return false
		}
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return true
	}
	var held []string
	check := &Command{Name: "test-port-held", Args: "WHEN", Group: "run", MinArgs: 1, MaxArgs: 1, Summary: "note whether the port is held",
		Run: func(sc *Scenario, inv Invocation) error {
			if !free() {
				held = append(held, inv.Args[0])
			}
			return nil
		}}
	file := filepath.Join(t.TempDir(), "restart.txtar")
	script := fmt.Sprintf(`# A port held across a restart and a halt.
spawn server ports=%d RACEKIT_HARNESS_CHILD=binder BIND_PORT=%d -- harness.test
await server list configmaps 200
test-port-held spawned
restart server
await server list configmaps 200 2
test-port-held restarted
halt server
stdout 'bound 127.0.0.1:%d'
test-port-held halted
`, port, port, port)
	assert.NilError(t, os.WriteFile(file, []byte(script), 0o644))
	res := RunFiles(context.Background(), controlPlane(t), ScriptOptions{Files: []string{file}, Commands: []*Command{check}})
	assert.Assert(t, res[0].Passed, "%s", res[0].Log)
	assert.DeepEqual(t, held, []string{"spawned", "restarted", "halted"})
	assert.Assert(t, free(), "the port is still held after the scenario ended")
}
