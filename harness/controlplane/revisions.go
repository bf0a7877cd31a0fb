package controlplane

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
//
// kube-apiserver's own compaction is off (--etcd-compaction-interval=0;
// it would compact every five minutes): an old resourceVersion stays
// readable until a scenario compacts (Compact), so that a list as of the
// past (hold ... at=) reads what etcd held then, however long the process
// has run. RevisionHolds keep one scenario's compaction from taking the
// past another still reads.
//
// Services get their cluster IPs from 10.0.0.0/16, not envtest's
// 10.0.0.0/24: without the namespace controller, a scenario's Services
// outlive its namespace, and 254 addresses ran out within one test
// process (two rounds of explore auto's rabbitmq test, about 320 runs,
// each a Service r: "failed to allocate a serviceIP ...: range is full",
// and the operator never made its StatefulSet).
func configureAPIServer(s *envtest.APIServer) {
	s.Configure().Set("watch-cache-sizes", "deployments.apps#0")
	s.Configure().Set("etcd-compaction-interval", "0")
	s.Configure().Set("service-cluster-ip-range", serviceRange)
}

// serviceRange is the control plane's range of Service cluster IPs.
const serviceRange = "10.0.0.0/16"

// holdTimeout bounds how long a reader waits for a compaction to end, and
// a compaction for the readers that hold old revisions. Scenarios take
// seconds; this only turns a bug into a clear failure.
const holdTimeout = 2 * time.Minute

// Reader is one reader of old revisions: a scenario that keeps a
// resourceVersion to read later. Its Name names it in messages; Done ends
// its waits.
type Reader struct {
	Name string
	Done <-chan struct{}
}

// RevisionHolds keep etcd compaction from pulling old revisions out from
// under the readers that still mean to read them. A reader holds them the
// first time it keeps a resourceVersion for later, and keeps it until it
// releases it. A compaction waits until no other reader holds it; while it
// waits or runs, new holds wait for it.
type RevisionHolds struct {
	mu         sync.Mutex
	holders    map[*Reader]string // the reader → where it took its hold
	compacting bool
	changed    chan struct{} // closed, then replaced, whenever the above change
}

// RevisionHolds returns the control plane's holds on old revisions.
func (cp *ControlPlane) RevisionHolds() *RevisionHolds { return &cp.holds }

// signal wakes everyone waiting on h. Call it with h.mu held.
func (h *RevisionHolds) signal() {
	if h.changed != nil {
		close(h.changed)
	}
	h.changed = make(chan struct{})
}

// wait returns a channel that is closed at the next change. Call it with
// h.mu held.
func (h *RevisionHolds) wait() <-chan struct{} {
	if h.changed == nil {
		h.changed = make(chan struct{})
	}
	return h.changed
}

// Hold registers r, at pos, as a reader of old revisions until Release,
// and says whether it took a new hold. A reader that already holds returns
// at once, so that it never waits for a compaction that waits for it.
func (h *RevisionHolds) Hold(r *Reader, pos string) (bool, error) {
	deadline := time.NewTimer(holdTimeout)
	defer deadline.Stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		if _, ok := h.holders[r]; ok {
			return false, nil
		}
		if !h.compacting {
			if h.holders == nil {
				h.holders = map[*Reader]string{}
			}
			h.holders[r] = pos
			return true, nil
		}
		if err := h.await(r, deadline.C, "an etcd compaction to end"); err != nil {
			return false, err
		}
	}
}

// Release drops r's hold, if it has one.
func (h *RevisionHolds) Release(r *Reader) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.holders[r]; ok {
		delete(h.holders, r)
		h.signal()
	}
}

// Exclusive waits until no reader but r holds old revisions and no other
// compaction runs, and returns a function that ends the exclusive time.
// r's own hold is dropped: a compacting reader gives up its history.
func (h *RevisionHolds) Exclusive(r *Reader) (func(), error) {
	deadline := time.NewTimer(holdTimeout)
	defer deadline.Stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.holders[r]; ok {
		delete(h.holders, r)
		h.signal() // a compaction may be waiting for r
	}
	for h.compacting {
		if err := h.await(r, deadline.C, "another compaction to end"); err != nil {
			return nil, err
		}
	}
	h.compacting = true // from here on, new holds wait
	h.signal()
	for len(h.holders) > 0 {
		if err := h.await(r, deadline.C, "scenarios that still read old revisions: "+h.describe()); err != nil {
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
// of r.
func (h *RevisionHolds) await(r *Reader, deadline <-chan time.Time, what string) error {
	changed := h.wait()
	h.mu.Unlock()
	defer h.mu.Lock()
	select {
	case <-changed:
		return nil
	case <-deadline:
		return fmt.Errorf("waited %v for %s", holdTimeout, what)
	case <-r.Done:
		return context.Canceled
	}
}

// describe names the holders, for failure messages. Call it with h.mu held.
func (h *RevisionHolds) describe() string {
	var out []string
	for r, pos := range h.holders {
		out = append(out, fmt.Sprintf("%s (since %s)", r.Name, pos))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// Compact compacts etcd at its current revision and returns it. The
// compaction is physical: when it returns, every older revision is gone.
// Call it between Exclusive and the function that returns.
//
// It talks to etcd directly, as the API server's own compactor would (it
// is off: configureAPIServer), but does not update compact_rev_key: the API
// server learns of the compaction only when etcd refuses it an old
// revision.
func (cp *ControlPlane) Compact(ctx context.Context) (int64, error) {
	ec, err := cp.etcd()
	if err != nil {
		return 0, err
	}
	defer ec.Close()
	rev, err := currentRevision(ctx, ec)
	if err != nil {
		return 0, err
	}
	if _, err := ec.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		return 0, fmt.Errorf("at revision %d: %w", rev, err)
	}
	return rev, nil
}

// Revision returns etcd's current revision: the resourceVersion of the
// whole store now, after every write that has been answered, from which a
// list with resourceVersionMatch=Exact reads the state as it is now.
func (cp *ControlPlane) Revision(ctx context.Context) (int64, error) {
	ec, err := cp.etcd()
	if err != nil {
		return 0, err
	}
	defer ec.Close()
	return currentRevision(ctx, ec)
}

// etcd returns a client of the control plane's etcd; close it.
func (cp *ControlPlane) etcd() (*clientv3.Client, error) {
	ec, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{cp.env.ControlPlane.Etcd.URL.String()},
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("etcd client: %w", err)
	}
	return ec, nil
}

// currentRevision reads the store's current revision, which any read
// carries in its header.
func currentRevision(ctx context.Context, ec *clientv3.Client) (int64, error) {
	resp, err := ec.Get(ctx, "compact_rev_key")
	if err != nil {
		return 0, fmt.Errorf("read the current revision: %w", err)
	}
	return resp.Header.Revision, nil
}
