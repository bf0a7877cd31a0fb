package language

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/internal/hint"
)

// Ref is an object a scenario names: resource/name[/subresource].
type Ref struct {
	GVR         schema.GroupVersionResource
	Namespaced  bool
	Name        string
	Subresource string
}

// Object resolves "deployments/web" (or "deployment/web", "webapps/web/status").
func (sc *Scenario) Object(arg string) (Ref, error) {
	parts := strings.SplitN(arg, "/", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return Ref{}, fmt.Errorf("bad object %q: want RESOURCE/NAME, such as deployments/web", arg)
	}
	gvr, namespaced, err := sc.cp.Resource(parts[0])
	if err != nil {
		return Ref{}, err
	}
	r := Ref{GVR: gvr, Namespaced: namespaced, Name: parts[1]}
	if len(parts) == 3 {
		r.Subresource = parts[2]
	}
	return r, nil
}

// String renders r as it appears in traces.
func (r Ref) String() string {
	s := r.GVR.Resource + "/" + r.Name
	if r.Subresource != "" {
		s += "/" + r.Subresource
	}
	return s
}

// Subresources returns r's subresource as the dynamic client takes it.
func (r Ref) Subresources() []string {
	if r.Subresource == "" {
		return nil
	}
	return []string{r.Subresource}
}

// ResourceClient returns actor's client for r's resource in the scenario's
// namespace.
func (sc *Scenario) ResourceClient(a *Actor, r Ref) dynamic.ResourceInterface {
	if r.Namespaced {
		return a.Dynamic.Resource(r.GVR).Namespace(sc.Namespace)
	}
	return a.Dynamic.Resource(r.GVR)
}

// CollectionPath is the API path of gvr in the scenario's namespace:
// /apis/GROUP/VERSION/namespaces/NS/RESOURCE, or /api/v1/... for the core
// group.
func (sc *Scenario) CollectionPath(gvr schema.GroupVersionResource, namespaced bool) string {
	path := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		path = "/api/" + gvr.Version
	}
	if namespaced {
		path += "/namespaces/" + sc.Namespace
	}
	return path + "/" + gvr.Resource
}

// Read returns the object named as scenarios name it (deployments/web,
// memcacheds/cache/status) as the API server holds it, outside the
// recording: for assertions, which must not change the trace they check.
func (sc *Scenario) Read(object string) (*unstructured.Unstructured, error) {
	r, err := sc.Object(object)
	if err != nil {
		return nil, err
	}
	return sc.ReadRef(r)
}

// ReadRef returns r as the API server holds it, for assertions, outside the
// recording: assertions must not change the trace they check.
//
// Most of the time the trace already says: the last answer the server gave
// about r (to a GET, a create, an update or a patch) is the object as
// stored, and nothing has touched it since (Recorder.LastKnown). Otherwise
// (after a 409, a delete, a dry run, or a write to its collection such as
// a deletecollection) it sends a GET as the harness itself. With
// Options.VerifyReads, every answer taken from the trace is checked against
// a GET; when an extension says so (Extension.ReadServer), every read is a
// GET.
//
// A subresource is always read with a GET of that subresource: the trace
// knows objects, not subresources, and a subresource may be an object of
// another kind (a Deployment's scale is a Scale).
func (sc *Scenario) ReadRef(r Ref) (*unstructured.Unstructured, error) {
	if r.Subresource != "" {
		return sc.get(r)
	}
	key := record.Key{Group: r.GVR.Group, Resource: r.GVR.Resource, Name: r.Name}
	if r.Namespaced {
		key.Namespace = sc.Namespace
	}
	obj, ok := sc.rec.LastKnown(key)
	if !ok || sc.readsServer() {
		return sc.get(r)
	}
	if sc.run.opts.VerifyReads {
		if err := sc.verify(r, key, obj); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// readsServer reports whether an extension makes every read of an
// object's state a GET (Extension.ReadServer).
func (sc *Scenario) readsServer() bool {
	return slices.ContainsFunc(sc.run.opts.Extensions, func(e *Extension) bool { return e.ReadServer })
}

// get GETs r, or its subresource, as the harness itself.
func (sc *Scenario) get(r Ref) (*unstructured.Unstructured, error) {
	cl := sc.clients.admin.Resource(r.GVR)
	if r.Namespaced {
		return cl.Namespace(sc.Namespace).Get(sc.ctx, r.Name, metav1.GetOptions{}, r.Subresources()...)
	}
	return cl.Get(sc.ctx, r.Name, metav1.GetOptions{}, r.Subresources()...)
}

// verify checks obj, the trace's copy of r (key), against a GET.
func (sc *Scenario) verify(r Ref, key record.Key, obj *unstructured.Unstructured) error {
	fresh, err := sc.get(r)
	if err != nil {
		return fmt.Errorf("verify the trace's copy of %s: %w", r, err)
	}
	now, _ := sc.rec.LastKnown(key)
	return judgeCopy(r, fresh, obj, now)
}

// judgeCopy judges obj, the trace's copy of r at a read, against fresh,
// the API server's answer to a GET sent after it, with now the trace's
// copy once that answer is in (nil if the trace no longer holds one). An
// actor that runs on its own may write r between the read and the GET:
// its write passes the recorder before it reaches the API server, and the
// recorder then forgets what it knew of r, or holds the newer copy once
// the write's answer is in. The server being ahead of a copy the trace no
// longer holds is that write, not a wrong copy; only a difference while
// the trace still holds obj is one.
func judgeCopy(r Ref, fresh, obj, now *unstructured.Unstructured) error {
	diff := cmp.Diff(fresh.Object, obj.Object)
	if diff == "" || now == nil || now.GetResourceVersion() != obj.GetResourceVersion() {
		return nil
	}
	return fmt.Errorf("the trace's copy of %s differs from the API server's (-server +trace):\n%s", r, diff)
}

// ObjectRef resolves the object obj is (a snapshot, or an object from an
// archive file), with subresource.
func (sc *Scenario) ObjectRef(obj *unstructured.Unstructured, subresource string) (Ref, error) {
	gvk := obj.GroupVersionKind()
	m, err := sc.cp.Mapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return Ref{}, fmt.Errorf("%s %s: unknown kind: %w", obj.GetAPIVersion(), obj.GetKind(), err)
	}
	return Ref{GVR: m.Resource, Namespaced: m.Scope.Name() == "namespace", Name: obj.GetName(), Subresource: subresource}, nil
}

// ActorAndObject resolves the ACTOR RESOURCE/NAME arguments most commands
// start with.
func (sc *Scenario) ActorAndObject(actor, object string) (*Actor, Ref, error) {
	a, err := sc.Actor(actor)
	if err != nil {
		return nil, Ref{}, UsageError("%v", err)
	}
	r, err := sc.Object(object)
	if err != nil {
		return nil, Ref{}, UsageError("%v", err)
	}
	return a, r, nil
}

// Patch patches the object as actor with the patch type and body.
func (sc *Scenario) Patch(actor, object string, pt types.PatchType, body []byte) error {
	a, r, err := sc.ActorAndObject(actor, object)
	if err != nil {
		return err
	}
	_, err = sc.ResourceClient(a, r).Patch(sc.ctx, r.Name, pt, body, metav1.PatchOptions{}, r.Subresources()...)
	return err
}

// snapshots are the objects and lists a scenario keeps by name.
type snapshots struct {
	mu sync.Mutex
	m  map[string]*unstructured.Unstructured
}

// Snapshot returns the snapshot called name. Callers must not change it:
// KeepSnapshot a changed copy instead.
func (sc *Scenario) Snapshot(name string) (*unstructured.Unstructured, error) {
	s := sc.snapshots
	s.mu.Lock()
	defer s.mu.Unlock()
	snap, ok := s.m[name]
	if !ok {
		return nil, fmt.Errorf("no snapshot %q%s: take one first with get ACTOR RESOURCE/NAME %s", name,
			hint.DidYouMean(name, slices.Collect(maps.Keys(s.m))), name)
	}
	return snap, nil
}

// Snapshots returns the names of the scenario's snapshots, sorted.
func (sc *Scenario) Snapshots() []string {
	sc.snapshots.mu.Lock()
	defer sc.snapshots.mu.Unlock()
	return slices.Sorted(maps.Keys(sc.snapshots.m))
}

// KeepSnapshot keeps obj as the snapshot called name.
func (sc *Scenario) KeepSnapshot(name string, obj *unstructured.Unstructured) {
	sc.snapshots.mu.Lock()
	defer sc.snapshots.mu.Unlock()
	sc.snapshots.m[name] = obj
}

// WireObject resolves an object as the trace names it: an API object
// ("deployment/web" is deployments/web) or a call outside the API server
// (registrations/NAME: a service's resource, AddService).
func (sc *Scenario) WireObject(arg string) (string, error) {
	if res, name, ok := strings.Cut(arg, "/"); ok && sc.Service(res) && name != "" && !strings.Contains(name, "/") {
		return arg, nil
	}
	r, err := sc.Object(arg)
	if err != nil {
		return "", UsageError("%v", err)
	}
	return r.String(), nil
}
