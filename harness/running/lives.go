package running

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/internal/tail"
)

// The bookkeeping of what runs on its own: each name start or spawn runs
// something under, and its lives, each with how it ended.

// lifeline is a name under which start or spawn runs something on its own,
// with its lives: each start or spawn of the name begins one, and halt, or
// its own end, ends it. A name whose last life was halted can be started
// again, as a restarted controller would be.
type lifeline struct {
	name  string
	lives []*life
}

// last returns the lifeline's newest life: the one that runs, if one does.
func (r *lifeline) last() *life { return r.lives[len(r.lives)-1] }

// life is one run under a lifeline's name: a controller started in process,
// or a process spawned.
type life struct {
	name, actor string
	// what says which: "controller" or "process", for messages.
	what string
	// n is the life's number under its name, from 1.
	n int
	// started is when start or spawn began it: idle's quiet period
	// counts from then at the earliest. firstSeq is the sequence number
	// its first call has, or will have: its calls are those from there
	// on.
	started  time.Time
	firstSeq int
	// label is the goroutine label of a life in process, metrics the URL
	// of a process's metrics endpoint: idle's evidence (settle.go), ""
	// when it has none.
	label, metrics string
	// stop asks it to stop: cancel its context, or send SIGTERM; kill,
	// for a process, sends SIGKILL.
	stop, kill func()
	// done is closed when it has returned or exited; err is then what
	// Run returned or how the process exited.
	done chan struct{}
	err  error
	// output is a process's output, the last of it (nil in process).
	output *tail.Tail
	// crash is whether a crash killed it, and its calls in flight
	// (crash.go); again starts its name anew as it was started, for
	// restart (restart.go).
	crash crashState
	again func(sc *language.Scenario, pos string, within time.Duration) error

	mu sync.Mutex
	// halted says where halt stopped it: a script's file:line, or the
	// end of the scenario; "" until then. ownEnd is set when it had
	// ended on its own before.
	halted string
	ownEnd bool
	// from and to are the recorder's last sequence numbers when it began
	// and when it was gone (its Run returned, its process exited, or a
	// crash killed it), which gone says; for Lives.
	from, to int
	gone     bool
}

// noteGone notes that l is gone, at the recorder's last sequence number:
// a call recorded after it came after l's end. The first note counts (a
// crash, before the Run it cancelled returns).
func (l *life) noteGone(sc *language.Scenario) {
	seq := sc.Recorder().LastSeq()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.gone {
		l.to, l.gone = seq, true
	}
}

// ended reports whether l has returned or exited, and how.
func (l *life) ended() (bool, error) {
	select {
	case <-l.done:
		return true, l.err
	default:
		return false, nil
	}
}

// haltedAt returns where halt stopped l, or "" while nothing has.
func (l *life) haltedAt() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.halted
}

// over returns where halt or crash ended l, or "" while neither has.
func (l *life) over() string {
	if at := l.haltedAt(); at != "" {
		return at
	}
	return l.crash.at()
}

// describe says how l ended, with a process's last lines of output.
func (l *life) describe() string {
	l.mu.Lock()
	halted, ownEnd := l.halted, l.ownEnd
	l.mu.Unlock()
	var b strings.Builder
	switch crashed := l.crash.at(); {
	case crashed != "":
		fmt.Fprintf(&b, "%s %s was crashed, at %s", l.what, l.name, crashed)
	case halted != "" && !ownEnd:
		fmt.Fprintf(&b, "%s %s was halted, at %s", l.what, l.name, halted)
	case l.err != nil:
		fmt.Fprintf(&b, "%s %s ended on its own: %v", l.what, l.name, l.err)
	default:
		fmt.Fprintf(&b, "%s %s ended on its own, without an error", l.what, l.name)
	}
	if halted != "" && ownEnd {
		fmt.Fprintf(&b, " (and was halted after, at %s)", halted)
	}
	if l.output != nil {
		if out := strings.TrimSpace(l.output.String()); out != "" {
			fmt.Fprintf(&b, "; its last output:\n%s", lastLines(out, 15))
		}
	}
	return b.String()
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// running returns the lifeline called name, whose last life runs now or
// ran last.
func running(sc *language.Scenario, name string) (*lifeline, error) {
	st := stateOf(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	if r, ok := st.lifelines[name]; ok {
		return r, nil
	}
	var names []string
	for n := range st.lifelines {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, language.UsageError("nothing called %s is running: start a controller with start, or a process with spawn, first", name)
	}
	verb, listed := "running are", []string(nil)
	for _, n := range names {
		switch l := st.lifelines[n].last(); {
		case l.crash.at() != "":
			verb, n = "started are", n+" (crashed)"
		case l.haltedAt() != "":
			verb, n = "started are", n+" (halted)"
		}
		listed = append(listed, n)
	}
	return nil, language.UsageError("nothing called %s is running%s; %s %s", name, language.Suggest(name, names), verb, strings.Join(listed, ", "))
}

// checkFree refuses to start a life under name as actor while another
// holds the name or the actor: one that runs, or that ended on its own and
// has not been halted, which would report how. how is the command that
// asks, start or spawn, for the hints.
func checkFree(sc *language.Scenario, name, actor, how string) error {
	st := stateOf(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	if r, ok := st.lifelines[name]; ok {
		if l := r.last(); l.over() == "" {
			if done, _ := l.ended(); done {
				return language.UsageError("%s %s ended on its own and was not halted: halt %s first, which says how it ended, then %s it again", l.what, name, name, how)
			}
			return language.UsageError("%s is already running; halt it first", name)
		}
	}
	for _, r := range st.lifelines {
		if l := r.last(); l.actor == actor && l.over() == "" {
			other := fmt.Sprintf("give this one another actor: start %s as %s-2", name, actor)
			if how == "spawn" {
				other = "spawn this one under another name"
			}
			return language.UsageError("%s already runs as %s; halt it first, or %s", l.name, actor, other)
		}
	}
	return nil
}

// addLife keeps l as the newest life of its name, numbers it, and notes
// where on the recorder's sequence it begins.
func addLife(sc *language.Scenario, l *life) {
	// Before the lock: the recorder's is never taken inside it.
	l.from = sc.Recorder().LastSeq()
	st := stateOf(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.lifelines == nil {
		st.lifelines = map[string]*lifeline{}
	}
	r, ok := st.lifelines[l.name]
	if !ok {
		r = &lifeline{name: l.name}
		st.lifelines[l.name] = r
	}
	r.lives = append(r.lives, l)
	l.n = len(r.lives)
	if l.firstSeq == 0 {
		l.firstSeq = sc.Recorder().LastSeq() + 1
	}
}

// lastLife returns r's newest life, under the lock restart takes to add
// one.
func lastLife(sc *language.Scenario, r *lifeline) *life {
	st := stateOf(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	return r.last()
}

// lifeOf returns the newest life that runs, or ran, as actor, if any.
func lifeOf(sc *language.Scenario, actor string) *life {
	st := stateOf(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	var newest *life
	for _, r := range st.lifelines {
		for _, l := range r.lives {
			if l.actor == actor && (newest == nil || l.started.After(newest.started)) {
				newest = l
			}
		}
	}
	return newest
}

// runningLives returns the lives that run now, by name.
func runningLives(sc *language.Scenario) []*life {
	st := stateOf(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []*life
	for _, r := range st.lifelines {
		if l := r.last(); l.crash.restarting() {
			out = append(out, l) // its next life is on its way
		} else if l.over() == "" {
			if done, _ := l.ended(); !done {
				out = append(out, l)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// Life is one life of what start or spawn ran, as explore reads it: under
// which name and as which actor, and when it ran, on the recorder's
// sequence of calls.
type Life struct {
	Name, Actor string
	// From is the recorder's last sequence number when the life began:
	// a call with a greater one was sent while it ran, or after.
	From int
	// To is the recorder's last sequence number when the life was gone
	// (its Run returned, its process exited, or a crash killed it): a
	// call with a greater one was sent after. Gone is false, and To 0,
	// while it runs.
	To   int
	Gone bool
}

// Lives returns every life start and spawn began in the scenario, in the
// order they began: explore's moment after a write races only with a
// watcher that runs then (package explore's moments.go).
func Lives(sc *language.Scenario) []Life {
	st := stateOf(sc)
	st.mu.Lock()
	var ls []*life
	for _, r := range st.lifelines {
		ls = append(ls, r.lives...)
	}
	st.mu.Unlock()
	var out []Life
	for _, l := range ls {
		l.mu.Lock()
		out = append(out, Life{Name: l.name, Actor: l.actor, From: l.from, To: l.to, Gone: l.gone})
		l.mu.Unlock()
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].Name < out[j].Name
	})
	return out
}
