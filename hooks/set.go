package hooks

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Armed is a hook in a Set, with what has happened to it so far.
type Armed struct {
	Hook
	// ID is the hook's 1-based position in its Set.
	ID int

	seen    int // matching calls since arming
	fired   int
	errs    []error
	running bool // its action is running: the calls it makes do not fire it again
}

// Set holds the armed hooks of one scenario. It is safe for concurrent use;
// actions run without its lock held, so an action may make calls that fire
// other hooks.
type Set struct {
	mu    sync.Mutex
	hooks []*Armed

	// OnFire, if set, is called just before a hook's action runs. The
	// harness uses it to put the firing into the trace.
	OnFire func(h *Armed, e Event)

	// Timeout, if positive, bounds each action. An action that has not
	// returned by then is recorded as failed and the matched call goes on,
	// so that an action that blocks forever fails its scenario instead of
	// hanging it. The blocked action's goroutine is abandoned.
	Timeout time.Duration
}

// ErrActionTimeout is recorded, wrapped, for an action that outlived Timeout.
var ErrActionTimeout = errors.New("hook action did not finish")

// Arm adds h to the set and returns it. Its occurrences are counted from now.
func (s *Set) Arm(h Hook) *Armed {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := &Armed{Hook: h, ID: len(s.hooks) + 1}
	s.hooks = append(s.hooks, a)
	return a
}

// Fired returns how many times a has fired.
func (s *Set) Fired(a *Armed) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return a.fired
}

// Err returns the errors of a's actions so far, joined.
func (s *Set) Err(a *Armed) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(a.errs...)
}

// Hooks returns the armed hooks in arming order.
func (s *Set) Hooks() []*Armed {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Armed(nil), s.hooks...)
}

// wants reports whether any armed hook at p matches c, so that a Transport
// only buffers a response body when an action may read it.
func (s *Set) wants(p Point, c Call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.hooks {
		if a.Point == p && a.Match.Matches(c) {
			return true
		}
	}
	return false
}

// Fire counts e's call against every hook at e.Point that matches it and runs,
// in arming order, the actions of those whose occurrence has come. A hook
// whose action is running neither counts nor fires on the calls that action
// makes, so "every" cannot recurse into itself.
func (s *Set) Fire(e Event) {
	s.mu.Lock()
	var due []*Armed
	for _, a := range s.hooks {
		if a.running || a.Point != e.Point || !a.Match.Matches(e.Call) {
			continue
		}
		a.seen++
		if a.Occurrence == Every || a.seen == a.Occurrence {
			a.fired++
			a.running = true
			due = append(due, a)
		}
	}
	s.mu.Unlock()

	for _, a := range due {
		if s.OnFire != nil {
			s.OnFire(a, e)
		}
		err := s.run(a, e)
		s.mu.Lock()
		if err != nil {
			a.errs = append(a.errs, fmt.Errorf("%s: %w", a.Label, err))
		}
		a.running = false
		s.mu.Unlock()
	}
}

// run calls a's action, turning a panic into an error and bounding it by
// s.Timeout.
func (s *Set) run(a *Armed, e Event) error {
	call := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return a.Action(e)
	}
	if s.Timeout <= 0 {
		return call()
	}
	done := make(chan error, 1)
	go func() { done <- call() }()
	timer := time.NewTimer(s.Timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		return fmt.Errorf("%w within %v; the %s call went on without it", ErrActionTimeout, s.Timeout, e.Call)
	}
}
