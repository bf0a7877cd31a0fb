package record

import "fmt"

// Settled is a trace entry for a wait that found what runs on its own to
// have nothing left to do (idle): which life, and by what evidence, so that
// a reader of the trace knows what the verdict after it rests on.
type Settled struct {
	// Name is the name start or spawn ran it under; Actor is its actor.
	Name  string `json:"name"`
	Actor string `json:"actor"`
	// By is the evidence: the strongest signal the life has.
	By SettleSignal `json:"by"`
	// Detail says what the signal showed, in words that are the same on
	// every run (no counts of readings, no times but a quiet period the
	// scenario chose).
	Detail string `json:"detail,omitempty"`
}

// SettleSignal is the evidence a wait took for a life having settled.
type SettleSignal string

// The signals, strongest first.
const (
	// SettledByExit: the process exited, or Run returned: it makes no
	// more calls.
	SettledByExit SettleSignal = "exit"
	// SettledByGoroutines: every goroutine of a life in the test's process
	// was parked, twice over with nothing on the wire in between; no call
	// of its was in flight, and each of its watches had shown every write
	// made to its resource.
	SettledByGoroutines SettleSignal = "goroutines"
	// SettledByWorkqueue: its workqueues were empty and no reconcile ran,
	// twice over with nothing on the wire in between; no call of its was
	// in flight, and each of its watches had shown every write made to
	// its resource.
	SettledByWorkqueue SettleSignal = "workqueue"
	// SettledByQuiet: no call in flight for a quiet period, and each watch
	// caught up: a heuristic of time, for a life that shows no workqueue.
	SettledByQuiet SettleSignal = "quiet"
)

// String renders the entry as the trace shows it, after "idle: ".
func (s Settled) String() string {
	by := map[SettleSignal]string{
		SettledByExit:       "by its exit",
		SettledByGoroutines: "by its goroutines",
		SettledByWorkqueue:  "by its workqueue",
		SettledByQuiet:      "by a quiet period (a heuristic of time)",
	}[s.By]
	if by == "" {
		by = "by " + string(s.By)
	}
	out := fmt.Sprintf("%s settled %s", s.Name, by)
	if s.Name != s.Actor {
		out = fmt.Sprintf("%s (as %s) settled %s", s.Name, s.Actor, by)
	}
	if s.Detail != "" {
		out += ": " + s.Detail
	}
	return out
}

// NoteSettled adds a wait's evidence of a settled life to the trace.
func (r *Recorder) NoteSettled(s Settled) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, Entry{Settled: &s})
	r.pokeLocked()
}
