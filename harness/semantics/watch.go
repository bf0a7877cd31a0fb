package semantics

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/racekit/racekit/harness/language"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/rest"
)

var watchCommands = []*language.Command{
	{
		Name: "watch", Args: "ACTOR RESOURCE WATCH [resourceVersion=RV] [resourceVersionMatch=NotOlderThan|Exact] [allowWatchBookmarks=true] [sendInitialEvents=true] [timeoutSeconds=N]",
		Group: "write", MinArgs: 3, MaxArgs: 8,
		Summary:  "start a WATCH of RESOURCE in the scenario's namespace as ACTOR; its events are read, as the server sent them, with next; \"!\" expects the server to refuse it with an HTTP error",
		Negation: language.NegAPIError, Run: runWatch,
	},
	{
		Name: "next", Args: "WATCH ADDED|MODIFIED|DELETED|BOOKMARK|ERROR|END [NAME|CODE [REASON]]", Group: "assert", MinArgs: 2, MaxArgs: 4,
		Summary: "read the next event of WATCH, waiting at most 10s, and assert its type and its object's NAME (or an ERROR's CODE)",
		Detail:  "read the next event of WATCH, waiting at most 10s, and assert its type and the object's NAME (an ERROR's Status CODE and REASON; END: the server closed the stream); the event's object becomes snapshot WATCH",
		Run:     runNext,
	},
}

// watchWait bounds how long next waits for an event.
const watchWait = 10 * time.Second

// eventTypes are the types next reads; END is not an event but the end of
// the stream.
var eventTypes = []string{"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", "END"}

// watchStream is an open watch: a goroutine decodes the events the server
// sends, as they arrive, and next takes them one at a time.
type watchStream struct {
	name   string
	events chan watchEvent // closed when the stream ends
	err    error           // why the stream ended, if not cleanly; read after events is closed
	wait   time.Duration
	read   []string // what next has read so far, for failure messages
}

// watchEvent is one event as the server sent it.
type watchEvent struct {
	Type   string
	Object map[string]any
}

// summary renders e as next prints it: "ADDED web",
// "BOOKMARK resourceVersion=42 k8s.io/initial-events-end=true",
// "ERROR 410 Expired: message".
func (e watchEvent) summary() string {
	obj := &unstructured.Unstructured{Object: e.Object}
	switch e.Type {
	case "ERROR":
		code, _, _ := unstructured.NestedInt64(e.Object, "code")
		reason, _, _ := unstructured.NestedString(e.Object, "reason")
		msg, _, _ := unstructured.NestedString(e.Object, "message")
		return fmt.Sprintf("ERROR %d %s: %s", code, reason, msg)
	case "BOOKMARK":
		s := "BOOKMARK resourceVersion=" + obj.GetResourceVersion()
		ann := obj.GetAnnotations()
		for _, k := range slices.Sorted(maps.Keys(ann)) {
			s += " " + k + "=" + ann[k]
		}
		return s
	}
	return e.Type + " " + obj.GetName()
}

var watchOptions = []string{"resourceVersion", "resourceVersionMatch", "allowWatchBookmarks", "sendInitialEvents", "timeoutSeconds"}

func runWatch(sc *language.Scenario, inv language.Invocation) error {
	a, err := sc.Actor(inv.Args[0])
	if err != nil {
		return language.UsageError("%v", err)
	}
	gvr, namespaced, err := sc.ControlPlane().Resource(inv.Args[1])
	if err != nil {
		return language.UsageError("%v", err)
	}
	name := inv.Args[2]
	opts, err := language.ParseOptions(inv.Args[3:], watchOptions)
	if err != nil {
		return err
	}
	q := url.Values{"watch": {"true"}}
	for k, v := range opts {
		switch k {
		case "allowWatchBookmarks", "sendInitialEvents":
			if _, err := strconv.ParseBool(v); err != nil {
				return language.UsageError("bad %s=%s: want true or false", k, v)
			}
		case "timeoutSeconds":
			if n, err := strconv.Atoi(v); err != nil || n < 1 {
				return language.UsageError("bad timeoutSeconds=%s: want a whole number of seconds", v)
			}
		}
		q.Set(k, v)
	}
	if _, open := watch(sc, name); open {
		return language.UsageError("watch %q is already open; give the new one another name", name)
	}
	if inv.Defer == nil {
		return fmt.Errorf("cannot start a watch in a hook action")
	}
	if err := holdHistory(sc, inv); err != nil {
		return err
	}

	u, err := url.Parse(a.Config.Host)
	if err != nil {
		return err
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + sc.CollectionPath(gvr, namespaced)
	u.RawQuery = q.Encode()

	// A plain HTTP client on the actor's transport, so the watch passes
	// through its recorder and hooks, and the events are the bytes the
	// server sent: client-go's watch decoder makes up ERROR events of its
	// own when it cannot decode one, which a scenario must never assert.
	hc, err := rest.HTTPClientFor(a.Config)
	if err != nil {
		return fmt.Errorf("http client for %s: %w", a.Name, err)
	}
	ctx, cancel := context.WithCancel(sc.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		cancel()
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		cancel()
		return fmt.Errorf("watch %s: %w", gvr.Resource, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		return refusal(resp)
	}
	w := &watchStream{name: name, events: make(chan watchEvent, 1024), wait: watchWait}
	go w.decode(ctx, resp.Body)
	addWatch(sc, w)
	inv.Defer(func() {
		cancel()
		hc.CloseIdleConnections()
	})
	return nil
}

// collectionPath is the API path of gvr in the scenario's namespace:
// /apis/GROUP/VERSION/namespaces/NS/RESOURCE, or /api/v1/... for the core
// group.
func collectionPath(sc *language.Scenario, gvr schema.GroupVersionResource, namespaced bool) string {
	path := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		path = "/api/" + gvr.Version
	}
	if namespaced {
		path += "/namespaces/" + sc.Namespace
	}
	return path + "/" + gvr.Resource
}

// refusal turns the Status the server answered with into an error that
// apierrors understands, so that "!" can expect it.
func refusal(resp *http.Response) error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("HTTP %d, and reading its body: %w", resp.StatusCode, err)
	}
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
		if st.Code == 0 {
			st.Code = int32(resp.StatusCode)
		}
		return &apierrors.StatusError{ErrStatus: st}
	}
	return fmt.Errorf("HTTP %d: %s", resp.StatusCode, body)
}

// decode reads events from body until it ends or ctx is done, then closes
// w.events.
func (w *watchStream) decode(ctx context.Context, body io.ReadCloser) {
	defer close(w.events)
	defer body.Close()
	dec := json.NewDecoder(bufio.NewReader(body))
	for {
		var raw struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&raw); err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				w.err = fmt.Errorf("decode the watch stream: %w", err)
			}
			return
		}
		var obj map[string]any
		if err := utiljson.Unmarshal(raw.Object, &obj); err != nil {
			w.err = fmt.Errorf("decode a %s event: %w", raw.Type, err)
			return
		}
		select {
		case w.events <- watchEvent{Type: raw.Type, Object: obj}:
		case <-ctx.Done():
			return
		}
	}
}

// next returns the next event, or ok false when the stream has ended. It
// waits at most w.wait, and not past ctx.
func (w *watchStream) next(ctx context.Context) (e watchEvent, ok bool, err error) {
	timer := time.NewTimer(w.wait)
	defer timer.Stop()
	select {
	case e, ok := <-w.events:
		if !ok {
			w.read = append(w.read, "END")
			return e, false, w.err
		}
		w.read = append(w.read, e.summary())
		return e, true, nil
	case <-timer.C:
		return e, false, fmt.Errorf("no event within %v", w.wait)
	case <-ctx.Done():
		return e, false, fmt.Errorf("no event before the scenario's end: %w", ctx.Err())
	}
}

func runNext(sc *language.Scenario, inv language.Invocation) error {
	name, typ, detail := inv.Args[0], inv.Args[1], inv.Args[2:]
	if !slices.Contains(eventTypes, typ) {
		return language.UsageError("unknown event type %q%s; types are %s", typ, language.Suggest(typ, eventTypes), strings.Join(eventTypes, ", "))
	}
	switch {
	case (typ == "BOOKMARK" || typ == "END") && len(detail) > 0:
		return language.UsageError("%s takes nothing after it", typ)
	case typ != "ERROR" && len(detail) > 1:
		return language.UsageError("%s takes at most the object's NAME after it", typ)
	}
	w, ok := watch(sc, name)
	if !ok {
		return language.UsageError("no watch %q is open%s; start one with watch ACTOR RESOURCE %s", name, language.Suggest(name, watchNames(sc)), name)
	}
	want := strings.Join(inv.Args[1:], " ")
	e, open, err := w.next(sc.Context())
	if err != nil {
		return fmt.Errorf("watch %s: waiting for %s: %w; read so far: %s", name, want, err, w.history())
	}
	if !open {
		if typ == "END" {
			fmt.Fprintln(inv.Stdout, "END")
			return nil
		}
		return fmt.Errorf("watch %s: waiting for %s, the server ended the stream; read so far: %s", name, want, w.history())
	}
	fmt.Fprintln(inv.Stdout, e.summary())
	sc.KeepSnapshot(name, &unstructured.Unstructured{Object: e.Object})
	if e.Type != typ {
		return fmt.Errorf("watch %s: want %s, the next event is %s; read so far: %s", name, want, e.summary(), w.history())
	}
	if len(detail) == 0 {
		return nil
	}
	obj := &unstructured.Unstructured{Object: e.Object}
	if typ != "ERROR" {
		if got := obj.GetName(); got != detail[0] {
			return fmt.Errorf("watch %s: want %s, the event is for %q", name, want, got)
		}
		return nil
	}
	code, _, _ := unstructured.NestedInt64(e.Object, "code")
	reason, _, _ := unstructured.NestedString(e.Object, "reason")
	got := strconv.FormatInt(code, 10)
	if len(detail) > 1 {
		got += " " + reason
	}
	if wantDetail := strings.Join(detail, " "); got != wantDetail {
		return fmt.Errorf("watch %s: want ERROR %s, the event is %s", name, wantDetail, e.summary())
	}
	return nil
}

func (w *watchStream) history() string {
	if len(w.read) == 0 {
		return "nothing"
	}
	return strings.Join(w.read, ", ")
}

// watch returns sc's open watch called name.
func watch(sc *language.Scenario, name string) (*watchStream, bool) {
	st := stateKey.Of(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	w, ok := st.watches[name]
	return w, ok
}

func watchNames(sc *language.Scenario) []string {
	st := stateKey.Of(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	var names []string
	for n := range st.watches {
		names = append(names, n)
	}
	return names
}

// addWatch keeps w as one of sc's watches.
func addWatch(sc *language.Scenario, w *watchStream) {
	st := stateKey.Of(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.watches[w.name] = w
}
