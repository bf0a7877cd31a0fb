package controllers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/hooks"
	"github.com/racekit/racekit/internal/roundtrip"
)

// DefaultCacheTimeout bounds each wait for a controller's cache to catch up
// with the scenario's writes. The wait is event-driven and ends within
// milliseconds; the bound only turns a cache that never catches up (a
// watch the API server closed, an object the cache filters out) into a
// failure that names what is missing.
const DefaultCacheTimeout = 10 * time.Second

// controllerCache is the informer cache one instance of a cached
// controller reads through, as a manager's client does. Its informers LIST
// and WATCH through the instance's actor, so their calls are recorded and
// fire hooks like any other; the feed between them and the API server
// holds and counts their events.
//
// The harness keeps the cache deterministic: before each reconcile, after
// each hook action, and after each write the controller itself makes, it
// waits until the cache has taken in every write the trace shows to the
// kinds it caches (the write's answer names the resourceVersion; the
// informers' event handlers say when the store has it). Only a held
// resource lags, and only because the scenario said so.
type controllerCache struct {
	actor string
	feed  *feed
	cache cache.Cache
	kinds []cachedKind
	stop  context.CancelFunc
	done  chan error
	once  sync.Once
}

// cachedKind is one kind a cache holds.
type cachedKind struct {
	gvk schema.GroupVersionKind
	gvr schema.GroupVersionResource
}

// startCache starts a cache over objs, in the scenario's namespace, with
// cfg (the actor's recorded and hooked config), and returns once each
// kind's informer has synced: its initial list is in the store and its
// event handler has seen it. The informers
// start one after another, so that their calls come in the same order on
// every run.
func startCache(sc *language.Scenario, actor string, cfg *rest.Config, scheme *runtime.Scheme, objs []client.Object) (*controllerCache, error) {
	cc := &controllerCache{actor: actor, feed: newFeed(), done: make(chan error, 1)}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(cc.feed.wrap)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s cache http client: %w", actor, err)
	}
	for _, o := range objs {
		gvk, err := apiutil.GVKForObject(o, scheme)
		if err != nil {
			return nil, fmt.Errorf("cache of %s: %w", actor, err)
		}
		m, err := sc.Mapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("cache of %s: %s is not served: %w", actor, gvk.Kind, err)
		}
		cc.kinds = append(cc.kinds, cachedKind{gvk: gvk, gvr: m.Resource})
	}
	c, err := cache.New(cfg, cache.Options{
		HTTPClient: hc, Scheme: scheme, Mapper: sc.Mapper(),
		DefaultNamespaces: map[string]cache.Config{sc.Namespace: {}},
		// A read of a kind the controller did not declare would start an
		// informer in the middle of a reconcile, at a moment that differs
		// from run to run; it fails instead, naming the kind.
		ReaderFailOnMissingInformer: true,
	})
	if err != nil {
		return nil, fmt.Errorf("cache of %s: %w", actor, err)
	}
	cc.cache = c
	ctx, stop := context.WithCancel(sc.Context())
	cc.stop = stop
	go func() { cc.done <- c.Start(ctx) }()
	wait, cancel := context.WithTimeout(ctx, DefaultCacheTimeout)
	defer cancel()
	for i, o := range objs {
		k := cc.kinds[i]
		// GetInformer must not block until synced: its wait polls
		// HasSynced every 100 ms, which cost a cached controller about
		// 100 ms per scenario. The handler's checker below waits for the
		// same, and for the handler too, without a poll.
		inf, err := c.GetInformer(wait, o, cache.BlockUntilSynced(false))
		if err != nil {
			cc.close()
			return nil, fmt.Errorf("start the %s informer of %s: %w", k.gvr.Resource, actor, err)
		}
		reg, err := inf.AddEventHandler(cc.handler(k.gvr))
		if err != nil {
			cc.close()
			return nil, fmt.Errorf("watch the %s informer of %s: %w", k.gvr.Resource, actor, err)
		}
		// Synced, the store holds the initial list and the handler has
		// seen it: a hold that follows cannot catch the initial events,
		// and the first read does not wait on the informer's own poll.
		select {
		case <-reg.HasSyncedChecker().Done():
		case <-wait.Done():
			cc.close()
			return nil, fmt.Errorf("the %s informer of %s never synced: %w", k.gvr.Resource, actor, wait.Err())
		}
	}
	return cc, nil
}

// handler tells the feed what the store of gvr's informer holds; the
// informer calls it after it has updated the store.
func (cc *controllerCache) handler(gvr schema.GroupVersionResource) toolscache.ResourceEventHandler {
	key := func(obj any) (record.Key, bool) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		o, err := meta.Accessor(obj)
		if err != nil {
			return record.Key{}, false
		}
		return record.Key{Group: gvr.Group, Resource: gvr.Resource, Namespace: o.GetNamespace(), Name: o.GetName()}, true
	}
	seen := func(obj any) {
		if k, ok := key(obj); ok {
			o, _ := meta.Accessor(obj)
			cc.feed.saw(k, record.Version{RV: o.GetResourceVersion()})
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { seen(obj) },
		UpdateFunc: func(_, obj any) { seen(obj) },
		DeleteFunc: func(obj any) {
			if k, ok := key(obj); ok {
				cc.feed.saw(k, record.Version{Gone: true})
			}
		},
	}
}

// close stops the cache's informers and waits for them to end. It is
// safe to call more than once.
func (cc *controllerCache) close() {
	cc.once.Do(func() {
		cc.stop()
		<-cc.done
	})
}

// caches returns the kind's resource for each kind the cache holds.
func (cc *controllerCache) caches(resource string) bool {
	for _, k := range cc.kinds {
		if k.gvr.Resource == resource {
			return true
		}
	}
	return false
}

// catchUp waits until the cache has taken in every write the trace shows
// to the scenario's objects of the kinds it caches, except those of held
// resources, and fails after DefaultCacheTimeout naming what it still
// misses.
func catchUp(sc *language.Scenario, cc *controllerCache) error {
	want := map[record.Key]record.Version{}
	for key, v := range sc.Recorder().Written() {
		if key.Namespace == sc.Namespace && cc.caches(key.Resource) {
			want[key] = v
		}
	}
	held := map[string]bool{}
	for _, r := range cc.feed.heldResources() {
		held[r] = true
	}
	missing := func() []record.Key {
		var out []record.Key
		for key, v := range want {
			if held[key.Resource] {
				continue
			}
			got, ok := cc.feed.seen[key]
			switch {
			case v.Gone && (!ok || got.Gone || got.RV == v.RV):
			case !v.Gone && ok && got.RV == v.RV:
			default:
				out = append(out, key)
			}
		}
		return out
	}
	timeout := stateOf(sc).cacheTimeout
	if timeout == 0 {
		timeout = DefaultCacheTimeout
	}
	ctx, cancel := context.WithTimeout(sc.Context(), timeout)
	defer cancel()
	err := cc.feed.wait(ctx, func() bool { return len(missing()) == 0 })
	if err == nil {
		return nil
	}
	cc.feed.mu.Lock()
	keys := missing()
	cc.feed.mu.Unlock()
	var b []byte
	for _, k := range keys {
		b = fmt.Appendf(b, "\n  %s/%s: the trace shows %s", k.Resource, k.Name, want[k])
	}
	return fmt.Errorf("%w: the cache of %s still misses, after %v:%s%s", errCacheLag, cc.actor, timeout, b, cc.feed.describe(keys))
}

// syncAfterWrite is for a cached controller's client: after each write it
// makes to a kind its cache holds, the call returns only once the cache has
// taken the write in (unless the kind is held), as if the informer were
// always quick. Without it, whether the controller's next read sees its
// own write would depend on goroutine timing.
func syncAfterWrite(sc *language.Scenario, cc *controllerCache) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundtrip.Func(func(req *http.Request) (*http.Response, error) {
			req, call := hooks.Parsed("", req)
			resp, err := next.RoundTrip(req)
			if err == nil && record.WriteVerbs[call.Verb] && cc.caches(call.Resource) && resp.StatusCode < 300 {
				if err := catchUp(sc, cc); err != nil {
					resp.Body.Close()
					return nil, err
				}
			}
			return resp, err
		})
	}
}

// errCacheLag is returned, wrapped, when a cache does not catch up.
var errCacheLag = errors.New("cache did not catch up")
