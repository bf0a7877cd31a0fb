package semantics

import (
	"fmt"
	"sync"

	"github.com/racekit/racekit/harness/controlplane"
	"github.com/racekit/racekit/harness/language"
)

// state is what the API-semantics commands keep for one scenario: its
// open watches, by name, and the reader of old revisions it holds the
// control plane's history as.
type state struct {
	mu      sync.Mutex
	watches map[string]*watchStream
	reader  *controlplane.Reader
}

var stateKey = language.NewKey("api semantics", func(sc *language.Scenario) *state {
	return &state{watches: map[string]*watchStream{}, reader: sc.HistoryReader()}
})

// holdHistory takes sc's hold on old revisions for the rest of its script.
func holdHistory(sc *language.Scenario, inv language.Invocation) error {
	if inv.Defer == nil {
		return fmt.Errorf("cannot keep resourceVersions for later here (in a hook action)")
	}
	h, r := sc.ControlPlane().RevisionHolds(), stateKey.Of(sc).reader
	taken, err := h.Hold(r, inv.Pos)
	if taken {
		inv.Defer(func() { h.Release(r) })
	}
	return err
}

func runCompact(sc *language.Scenario, inv language.Invocation) error {
	done, err := sc.ControlPlane().RevisionHolds().Exclusive(stateKey.Of(sc).reader)
	if err != nil {
		return err
	}
	defer done()
	rev, err := sc.ControlPlane().Compact(sc.Context())
	if err != nil {
		return fmt.Errorf("compact etcd: %w", err)
	}
	fmt.Fprintf(inv.Stdout, "compacted etcd at revision %d\n", rev)
	return nil
}
