package running

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// queueModel is a controller as idle's workqueue rules see it: one worker
// and a deduplicating workqueue of items, each the key of an object whose
// reconcile reads it and writes it when what it saw (seen) lags behind
// what others wrote (value). Every write, its own too, comes back as a
// watch event that queues the object's item, or marks it dirty while it is
// being worked on; every reconcile that reads asks to be called again after
// a delay (RequeueAfter, as a poller does), and one whose read fails waits
// in a back-off. Metrics are scraped one counter at a time, with the
// controller going on between them, as a real endpoint is.
type queueModel struct {
	rng          *rand.Rand
	value, seen  []int
	ready        []int
	dirty        map[int]bool
	delayed      map[int]int  // item -> the step it is ready again
	backingOff   map[int]bool // the delayed items that wait after an error
	proc         int          // the item being worked on, or -1
	read         bool         // proc has read its object
	readValue    int          // what it read
	failed       bool         // its read failed
	events       []int        // items whose watch event is not shown yet
	gets, dones  int
	backoffs     int
	trace        []byte // 'r' an answered read, 'f' a failed one, 'w' a write
	step, writes int
}

func newQueueModel(rng *rand.Rand, items int) *queueModel {
	return &queueModel{rng: rng, value: make([]int, items), seen: make([]int, items),
		dirty: map[int]bool{}, delayed: map[int]int{}, backingOff: map[int]bool{}, proc: -1}
}

func (m *queueModel) enqueue(k int) {
	switch {
	case m.proc == k:
		m.dirty[k] = true
	case !slices.Contains(m.ready, k):
		m.ready = append(m.ready, k)
		delete(m.delayed, k)
		delete(m.backingOff, k)
	}
}

// act takes one step of the controller or of the world around it: others
// write (while external is set), a watch shows an event, a delayed item
// comes due, the worker takes, reads, writes or finishes.
func (m *queueModel) act(external bool) {
	m.step++
	for _, k := range slices.Sorted(maps.Keys(m.delayed)) {
		if m.delayed[k] <= m.step && !slices.Contains(m.ready, k) && m.proc != k {
			delete(m.delayed, k)
			delete(m.backingOff, k)
			m.ready = append(m.ready, k)
		}
	}
	switch c := m.rng.IntN(10); {
	case external && c == 0:
		k := m.rng.IntN(len(m.value))
		m.value[k]++
		m.trace = append(m.trace, 'w')
		m.events = append(m.events, k)
	case c <= 2 && len(m.events) > 0:
		m.enqueue(m.events[0])
		m.events = m.events[1:]
	case m.proc == -1 && len(m.ready) > 0:
		m.proc, m.read, m.failed = m.ready[0], false, false
		m.ready = m.ready[1:]
		m.gets++
	case m.proc != -1 && !m.read:
		m.read = true
		if m.rng.IntN(8) == 0 {
			m.failed = true
			m.trace = append(m.trace, 'f')
			return
		}
		m.readValue = m.value[m.proc]
		m.trace = append(m.trace, 'r')
	case m.proc != -1:
		k := m.proc
		if !m.failed && m.seen[k] != m.readValue {
			m.seen[k] = m.readValue
			m.writes++
			m.trace = append(m.trace, 'w')
			m.events = append(m.events, k)
		}
		m.proc = -1
		m.dones++
		if m.dirty[k] {
			delete(m.dirty, k)
			m.ready = append(m.ready, k)
			return
		}
		m.delayed[k] = m.step + 5 + m.rng.IntN(30)
		if m.failed {
			m.backoffs++
			m.backingOff[k] = true
		}
	}
}

// scrape reads the metrics as an endpoint serves them, one counter at a
// time in an order of the endpoint's, the controller taking a step or none
// between two counters.
func (m *queueModel) scrape(external bool) reading {
	var depth, gets, dones, active, backoffs float64
	reads := []func(){
		func() { depth = float64(len(m.ready)) },
		func() { gets = float64(m.gets) },
		func() { dones = float64(m.dones) },
		func() { active = map[bool]float64{true: 1}[m.proc != -1] },
		func() { backoffs = float64(m.backoffs) },
	}
	m.rng.Shuffle(len(reads), func(i, j int) { reads[i], reads[j] = reads[j], reads[i] })
	for _, read := range reads {
		read()
		if m.rng.IntN(3) == 0 {
			m.act(external)
		}
	}
	rd := reading{counted: true, idle: true, gets: gets, dones: dones, backoffs: backoffs,
		seen: fmt.Sprintf("%g/%g/%g/%g", depth, gets, dones, backoffs)}
	if depth > 0 || gets > dones || active > 0 {
		rd.idle = false
	}
	return rd
}

// wire says what the model's trace holds from entry from on.
func (m *queueModel) wire(from int) wireChange {
	if from > len(m.trace) {
		return wireWrites
	}
	t := string(m.trace[from:])
	switch {
	case strings.Contains(t, "w"):
		return wireWrites
	case t != "":
		return wireReads
	}
	return wireQuiet
}

// owes returns what the controller owes as idle begins a reading: an
// item queued, being worked on or shown by a watch and not queued yet,
// whose reconcile on the state as it is now would write. An item that
// waits in a back-off is left out: idle does not count it as work, and a
// scenario awaits the outcome of a retry (docs/reliability.md).
func (m *queueModel) owes() []string {
	var out []string
	lags := func(k int) bool { return m.seen[k] != m.value[k] }
	for _, k := range m.ready {
		if lags(k) {
			out = append(out, fmt.Sprintf("item %d queued", k))
		}
	}
	if m.proc != -1 && (lags(m.proc) || m.read && !m.failed && m.seen[m.proc] != m.readValue) {
		out = append(out, fmt.Sprintf("item %d being worked on", m.proc))
	}
	for _, k := range m.events {
		if lags(k) {
			out = append(out, fmt.Sprintf("item %d's event not shown yet", k))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.delayed)) {
		if lags(k) && !m.backingOff[k] {
			out = append(out, fmt.Sprintf("item %d waiting for its RequeueAfter", k))
		}
	}
	return out
}

// TestJudgeModel generates runs of queueModel with one to three items,
// others writing for a while and then not, and idle looking whenever no
// call is in flight and every watch has shown every write (as step does):
// whenever judge settles the controller, it owes nothing. With repeats
// allowed to settle on a reading that is not idle, it found a run with
// three items in which an item queued owed a write (seed 29);
// with the anchor kept across a reconcile that did not run to its end
// (rd.dones >= anchor.gets), one in which an item was queued and owed one.
func TestJudgeModel(t *testing.T) {
	const runs = 3000
	settled := map[verdict]int{}
	for seed := range uint64(runs) {
		rng := rand.New(rand.NewPCG(seed, 7))
		m := newQueueModel(rng, 1+int(seed%3))
		var j readings
		workload := 20 + rng.IntN(60)
		for m.step < 400 {
			external := m.step < workload
			m.act(external)
			// idle looks only with no call in flight and each watch caught
			// up; the model's calls are single steps, so only the events.
			if len(m.events) > 0 || rng.IntN(3) != 0 {
				continue
			}
			at, owed := len(m.trace), m.owes()
			rd := m.scrape(external)
			v := j.judge(rd, at, m.wire)
			if v == unsettled {
				continue
			}
			settled[v]++
			if len(owed) > 0 {
				t.Fatalf("seed %d, step %d: judge settled the controller (%v) on %+v, and it owes %s; trace %s",
					seed, m.step, v, rd, strings.Join(owed, ", "), m.trace)
			}
			break
		}
	}
	// The rules must settle most runs, or the check checks nothing.
	if settled[agreed] < runs/4 || settled[repeated] < runs/20 {
		t.Fatalf("too few runs settled to weigh the rules: %v of %d", settled, runs)
	}
	t.Logf("settled: %d by two readings that agree, %d by a reconcile since the anchor, of %d runs", settled[agreed], settled[repeated], runs)
}
