package hooks

import (
	"errors"
	"fmt"
	"sync"
)

// Armed is a hook in a Set, with what has happened to it so far.
type Armed struct {
	Hook
	// ID is the hook's 1-based position in its Set.
	ID int

	seen  int // matching calls since arming
	fired int
	errs  []error
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
}

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
// in arming order, the actions of those whose occurrence has come.
func (s *Set) Fire(e Event) {
	s.mu.Lock()
	var due []*Armed
	for _, a := range s.hooks {
		if a.Point != e.Point || !a.Match.Matches(e.Call) {
			continue
		}
		a.seen++
		if a.Occurrence == Every || a.seen == a.Occurrence {
			a.fired++
			due = append(due, a)
		}
	}
	s.mu.Unlock()

	for _, a := range due {
		if s.OnFire != nil {
			s.OnFire(a, e)
		}
		if err := a.Action(e); err != nil {
			s.mu.Lock()
			a.errs = append(a.errs, fmt.Errorf("%s: %w", a.Label, err))
			s.mu.Unlock()
		}
	}
}
