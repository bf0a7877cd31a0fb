package language

import (
	"strings"
	"sync"

	"github.com/racekit/racekit/hooks"
)

// hookBook holds a scenario's armed hooks, with where the script armed
// each, and which of their failures have been reported.
type hookBook struct {
	set *hooks.Set

	mu       sync.Mutex
	armed    []*ArmedHook
	reported map[*hooks.Armed]int // hook errors already reported
}

func newHookBook() *hookBook {
	return &hookBook{set: &hooks.Set{}, reported: map[*hooks.Armed]int{}}
}

// ArmedHook is a hook with where the script armed it.
type ArmedHook struct {
	*hooks.Armed
	// Pos is the file:line of the on command.
	Pos string
}

// Arm adds a hook armed at pos.
func (sc *Scenario) Arm(h hooks.Hook, pos string) *ArmedHook {
	b := sc.hooks
	a := &ArmedHook{Armed: b.set.Arm(h), Pos: pos}
	b.mu.Lock()
	b.armed = append(b.armed, a)
	b.mu.Unlock()
	return a
}

// HookByID returns the hook armed id-th.
func (sc *Scenario) HookByID(id int) (*ArmedHook, bool) {
	b := sc.hooks
	b.mu.Lock()
	defer b.mu.Unlock()
	if id < 1 || id > len(b.armed) {
		return nil, false
	}
	return b.armed[id-1], true
}

// Armed returns the hooks armed so far, in arming order.
func (sc *Scenario) Armed() []*ArmedHook {
	b := sc.hooks
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*ArmedHook(nil), b.armed...)
}

// hookErrors returns the hook action errors not reported before, each
// naming the hook and where it was armed.
func (sc *Scenario) hookErrors() []Failure {
	b := sc.hooks
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Failure
	for _, a := range b.armed {
		err := b.set.Err(a.Armed)
		if err == nil {
			continue
		}
		msgs := strings.Split(err.Error(), "\n")
		for _, m := range msgs[b.reported[a.Armed]:] {
			out = append(out, Failure{Kind: FailHookAction, Command: a.Label, Message: m,
				Hook: &FailedHook{ID: a.ID, Trigger: a.Hook.String(), Armed: a.Pos}})
		}
		b.reported[a.Armed] = len(msgs)
	}
	return out
}

// unfired returns a failure for each armed hook that never fired.
func (sc *Scenario) unfired() []Failure {
	b := sc.hooks
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Failure
	for _, a := range b.armed {
		if b.set.Fired(a.Armed) == 0 {
			out = append(out, Failure{Kind: FailUnfired, Command: a.Label, Message: "no matching call was made after it was armed",
				Hook: &FailedHook{ID: a.ID, Trigger: a.Hook.String(), Armed: a.Pos}})
		}
	}
	return out
}
