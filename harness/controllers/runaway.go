package controllers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/hooks"
)

// runawayCalls bounds the calls of one verb on one object that one
// reconcile may make: four times the attempts a retry allows. The
// production controller never comes near it. A controller that retries
// without bound is stopped there by a guard in its transport, with a
// failure that says so, rather than spinning until go test gives up.
var runawayCalls = 4 * language.ZeroDelayRetry().Steps

// errRunaway is the error the guard stops a call with.
var errRunaway = errors.New("retries without bound")

type budgetKey struct{}

// withBudget returns ctx with a fresh budget for one reconcile's calls by
// in, and an Abort through which a crash hook ends them.
func withBudget(ctx context.Context, in *Instance) (context.Context, *budget) {
	ctx, abort := hooks.WithAbort(ctx)
	b := &budget{calls: map[hooks.Call]int{}, in: in, abort: abort}
	return context.WithValue(ctx, budgetKey{}, b), b
}

// budgetOf returns the budget of the reconcile ctx belongs to, or nil.
func budgetOf(ctx context.Context) *budget {
	if ctx == nil {
		return nil
	}
	b, _ := ctx.Value(budgetKey{}).(*budget)
	return b
}

// budget counts one reconcile's calls by verb and object.
type budget struct {
	// in is the instance that reconciles; abort ends its calls (crash).
	in    *Instance
	abort *hooks.Abort
	mu    sync.Mutex
	calls map[hooks.Call]int
	over  hooks.Call // the first call that went over the bound
	n     int        // its number
}

// spend counts c and reports whether it is still within the bound.
func (b *budget) spend(c hooks.Call) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls[c]++
	n := b.calls[c]
	if n > runawayCalls && b.n == 0 {
		b.over, b.n = c, n
	}
	return n <= runawayCalls
}

// overrun returns errRunaway, saying which call went over, or nil.
func (b *budget) overrun() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n == 0 {
		return nil
	}
	steps := language.ZeroDelayRetry().Steps
	return fmt.Errorf("%w: the harness stopped the reconcile before its %s %s of %s, %d times the %d attempts a retry makes; "+
		"a controller that retries without a bound spins for as long as the conflicts last (unbounded retry)",
		errRunaway, hooks.Ordinal(b.n), b.over.Verb, b.over.Object(), runawayCalls/steps, steps)
}

// guard refuses, without sending it, a call that would take its
// reconcile's budget over the bound.
type guard struct {
	next http.RoundTripper
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if b, ok := req.Context().Value(budgetKey{}).(*budget); ok {
		var c hooks.Call
		req, c = hooks.Parsed("", req)
		c.Namespace = ""
		if !b.spend(c) {
			return nil, errRunaway
		}
	}
	return g.next.RoundTrip(req)
}
