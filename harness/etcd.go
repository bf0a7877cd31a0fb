package harness

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func init() {
	register(&Command{
		Name: "compact", Args: "", Group: "race", MinArgs: 0, MaxArgs: 0,
		Summary: "compact etcd at its current revision, through the etcd client, once no other running scenario still reads an older revision; older resourceVersions are then gone for good",
		Run:     runCompact,
	})
}

// configureAPIServer sets the kube-apiserver flags the API-semantics
// scenarios need, before it starts.
//
// Deployments run without a watch cache, so that their lists and watches
// reach etcd: a watch from a compacted resourceVersion then fails as etcd
// says, and resourceVersion=0 reads etcd. Custom resources cannot opt out
// one by one (only --watch-cache=false, for every resource, would do it), so
// WebApps keep the cache, and the scenarios show both paths side by side.
// Writes, and GETs without a resourceVersion, go to etcd either way, so a
// scenario that only reads and writes objects cannot tell the difference.
func configureAPIServer(s *envtest.APIServer) {
	s.Configure().Set("watch-cache-sizes", "deployments.apps#0")
}

// apiState is what the API-semantics commands keep for the scenarios that
// are running: their watches, and their holds on old revisions.
type apiState struct {
	history history

	mu      sync.Mutex
	watches map[*Scenario]map[string]*watchStream
}

// holdTimeout bounds how long a scenario waits for a compaction to end, and
// a compaction for the scenarios that hold old revisions. Scenarios take
// seconds; this only turns a bug into a clear failure.
const holdTimeout = 2 * time.Minute

// history keeps etcd compaction from pulling old revisions out from under
// the scenarios that still mean to read them. A scenario takes a hold the
// first time it keeps a resourceVersion for later (list, watch, let) and
// keeps it until its script ends. A compaction waits until no other
// scenario holds one; while it waits or runs, new holds wait for it.
type history struct {
	mu         sync.Mutex
	holders    map[*Scenario]string // the scenario → where it took its hold
	compacting bool
	changed    chan struct{} // closed, then replaced, whenever the above change
}

// signal wakes everyone waiting on h. Call it with h.mu held.
func (h *history) signal() {
	if h.changed != nil {
		close(h.changed)
	}
	h.changed = make(chan struct{})
}

// wait returns a channel that is closed at the next change. Call it with
// h.mu held.
func (h *history) wait() <-chan struct{} {
	if h.changed == nil {
		h.changed = make(chan struct{})
	}
	return h.changed
}

// hold registers sc, at pos, as a reader of old revisions until release,
// and says whether it took a new hold. A scenario that already holds returns
// at once, so that it never waits for a compaction that waits for it.
func (h *history) hold(sc *Scenario, pos string) (bool, error) {
	deadline := time.NewTimer(holdTimeout)
	defer deadline.Stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		if _, ok := h.holders[sc]; ok {
			return false, nil
		}
		if !h.compacting {
			if h.holders == nil {
				h.holders = map[*Scenario]string{}
			}
			h.holders[sc] = pos
			return true, nil
		}
		if err := h.await(sc, deadline.C, "an etcd compaction to end"); err != nil {
			return false, err
		}
	}
}

// release drops sc's hold, if it has one.
func (h *history) release(sc *Scenario) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.holders[sc]; ok {
		delete(h.holders, sc)
		h.signal()
	}
}

// exclusive waits until no scenario but sc holds old revisions and no other
// compaction runs, and returns a function that ends the exclusive time.
// sc's own hold is dropped: a compacting scenario gives up its history.
func (h *history) exclusive(sc *Scenario) (func(), error) {
	deadline := time.NewTimer(holdTimeout)
	defer deadline.Stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.holders[sc]; ok {
		delete(h.holders, sc)
		h.signal() // a compaction may be waiting for sc
	}
	for h.compacting {
		if err := h.await(sc, deadline.C, "another compaction to end"); err != nil {
			return nil, err
		}
	}
	h.compacting = true // from here on, new holds wait
	h.signal()
	for len(h.holders) > 0 {
		if err := h.await(sc, deadline.C, "scenarios that still read old revisions: "+h.describe()); err != nil {
			h.compacting = false
			h.signal()
			return nil, err
		}
	}
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.compacting = false
		h.signal()
	}, nil
}

// await waits, with h.mu held, for the next change, the deadline or the end
// of sc.
func (h *history) await(sc *Scenario, deadline <-chan time.Time, what string) error {
	changed := h.wait()
	h.mu.Unlock()
	defer h.mu.Lock()
	select {
	case <-changed:
		return nil
	case <-deadline:
		return fmt.Errorf("waited %v for %s", holdTimeout, what)
	case <-sc.ctx.Done():
		return sc.ctx.Err()
	}
}

// describe names the holders, for failure messages. Call it with h.mu held.
func (h *history) describe() string {
	var out []string
	for sc, pos := range h.holders {
		out = append(out, fmt.Sprintf("%s (since %s)", sc.Name, pos))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// holdHistory takes sc's hold on old revisions for the rest of its script.
func (sc *Scenario) holdHistory(inv Invocation) error {
	if inv.Defer == nil {
		return fmt.Errorf("cannot keep resourceVersions for later here (in a hook action)")
	}
	h := &sc.cp.api.history
	taken, err := h.hold(sc, inv.Pos)
	if taken {
		inv.Defer(func() { h.release(sc) })
	}
	return err
}

func runCompact(sc *Scenario, inv Invocation) error {
	done, err := sc.cp.api.history.exclusive(sc)
	if err != nil {
		return err
	}
	defer done()
	rev, err := sc.cp.compactEtcd(sc.ctx)
	if err != nil {
		return fmt.Errorf("compact etcd: %w", err)
	}
	fmt.Fprintf(inv.Stdout, "compacted etcd at revision %d\n", rev)
	return nil
}

// compactEtcd compacts etcd at its current revision and returns it. The
// compaction is physical: when it returns, every older revision is gone.
//
// It talks to etcd directly, as the API server's own compactor does every
// five minutes, but does not update compact_rev_key: the API server learns
// of the compaction only when etcd refuses it an old revision.
func (cp *ControlPlane) compactEtcd(ctx context.Context) (int64, error) {
	ec, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{cp.env.ControlPlane.Etcd.URL.String()},
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return 0, fmt.Errorf("etcd client: %w", err)
	}
	defer ec.Close()
	// Any read carries the store's current revision in its header.
	resp, err := ec.Get(ctx, "compact_rev_key")
	if err != nil {
		return 0, fmt.Errorf("read the current revision: %w", err)
	}
	rev := resp.Header.Revision
	if _, err := ec.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		return 0, fmt.Errorf("at revision %d: %w", rev, err)
	}
	return rev, nil
}
