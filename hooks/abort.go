package hooks

import (
	"context"
	"sync"
)

// Abort ends the work of a context from inside a hook's action: the call
// that fired the hook, and every later call made with that context through
// a Transport, fail with the error given to Set, as if the process that
// made them had died at that moment. A call aborted at Before is not sent;
// one aborted at After loses its answer. It is how a scenario crashes a
// controller in the middle of a reconcile.
type Abort struct {
	mu  sync.Mutex
	err error
}

type abortKey struct{}

// WithAbort returns ctx carrying a new Abort, for one unit of work (one
// reconcile) whose calls a hook may end.
func WithAbort(ctx context.Context) (context.Context, *Abort) {
	a := &Abort{}
	return context.WithValue(ctx, abortKey{}, a), a
}

// AbortOf returns the Abort ctx carries, or nil.
func AbortOf(ctx context.Context) *Abort {
	if ctx == nil {
		return nil
	}
	a, _ := ctx.Value(abortKey{}).(*Abort)
	return a
}

// Set aborts the work with err; the first error set stays.
func (a *Abort) Set(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err == nil {
		a.err = err
	}
}

// Err returns the error the work was aborted with, or nil.
func (a *Abort) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

func aborted(ctx context.Context) error {
	if a := AbortOf(ctx); a != nil {
		return a.Err()
	}
	return nil
}
