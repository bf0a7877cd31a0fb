package running

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/harness/views"
)

// How idle knows that a life has nothing left to do, by evidence rather
// than by a quiet period: each life has a signal, the strongest it offers
// (docs/reliability.md says what each can and cannot promise).
//
//   - A controller started in process runs on goroutines that carry a label
//     of its life (pprof.Do): it has settled when every one of them is
//     parked (waiting on a channel, a lock, a timer or the network), in two
//     readings of the process's goroutines with nothing on the wire in
//     between. A goroutine that has an event to handle is runnable, not
//     parked, so an event its informer has read but its handler has not yet
//     queued keeps it busy.
//   - A process that serves metrics (spawn ... metrics=) has settled when
//     its workqueues are empty and no item it took is unfinished, in two
//     readings of its metrics that agree, with nothing on the wire in
//     between: client-go's and controller-runtime's workqueue_depth,
//     workqueue_queue_duration_seconds (one per Get) and
//     workqueue_work_duration_seconds (one per Done), and
//     controller_runtime_active_workers.
//   - Any other life falls back to a quiet period: a heuristic of time,
//     named so in the trace.
//
// Every signal also needs that no call of the life's actor is in flight and
// that each watch the actor has open has shown it every write made to its
// resource before now (caughtUp): the write a scenario made just before
// idle has reached the controller.

// lifeLabel is the pprof label every goroutine of an in-process life
// carries, by which idle finds them in the process's goroutines.
const lifeLabel = "racekit-life"

// labelOf returns the value of l's goroutine label: unique among the
// scenarios and lives of one process.
func labelOf(sc *language.Scenario, l *life) string {
	return fmt.Sprintf("%s/%s/%d", sc.Namespace, l.name, l.n)
}

// runLabelled runs f on the calling goroutine with l's goroutine label, which
// every goroutine f starts inherits.
func runLabelled(ctx context.Context, label string, f func(context.Context)) {
	pprof.Do(ctx, pprof.Labels(lifeLabel, label), f)
}

// reading is one look at a life's signal.
type reading struct {
	// idle is set when the signal shows nothing running or ready to run.
	idle bool
	// seen is what the reading saw, to tell two readings apart: two that
	// agree, with nothing on the wire between them, settle the life.
	seen string
	// why says, when not idle, what was busy: for the failure message.
	why string
	// backoffs counts the items put back to wait in a back-off after an
	// error, which keeps them out of every queue's depth: two readings
	// with only reads between them settle the life only if no back-off
	// began in between. Where controller-runtime's reconcile results
	// name the queue's controller, it is the reconciles that ended in an
	// error or asked to be requeued at once (a rate-limited add); a
	// RequeueAfter is a delay, not a retry, although the priority queue
	// counts it in workqueue_retries_total. Elsewhere (a client-go
	// workqueue) it is workqueue_retries_total, which counts every
	// delayed add, a RequeueAfter's too, and so is stricter than it need
	// be.
	backoffs float64
	// counted is set on a reading of a workqueue's metrics, which counts
	// the items its queues took (gets) and finished (dones): what judge's
	// rule of a reconcile since the anchor reads.
	counted     bool
	gets, dones float64
	// adds counts the items added to the queues since the process began
	// (workqueue_adds_total): while it is 0, no object the life's
	// informers were shown has reached a queue yet (firstAdd).
	adds float64
	// noQueue is set when the metrics answered and showed no workqueue:
	// a controller-runtime process before v0.15 makes its queues as its
	// controllers start, and under leader election not before it leads
	// (idleEndsEarly).
	noQueue bool
}

// goroutineReading reads which goroutines of the process carry label, and
// whether each is parked. The runtime takes the profile with the world
// stopped, so it is one consistent moment of every goroutine.
func goroutineReading(label string) (reading, error) {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return reading{}, fmt.Errorf("read the goroutines: %w", err)
	}
	groups, err := labelledGroups(buf.Bytes(), lifeLabel, label)
	if err != nil {
		return reading{}, err
	}
	r := reading{idle: true}
	var seen, busy []string
	for _, g := range groups {
		seen = append(seen, fmt.Sprintf("%d@%s", g.count, strings.Join(g.pcs, ",")))
		if top := funcName(g.pcs[0]); top != "runtime.gopark" {
			r.idle = false
			busy = append(busy, fmt.Sprintf("%d at %s", g.count, g.where))
			continue
		}
		for _, fn := range g.frames {
			if strings.HasPrefix(fn, syncing) {
				r.idle = false
				busy = append(busy, fmt.Sprintf("%d waiting for its caches to sync in %s", g.count, fn))
				break
			}
		}
	}
	if len(groups) == 0 {
		r.idle, r.why = false, "none of its goroutines runs yet"
	}
	sort.Strings(seen)
	r.seen = strings.Join(seen, " ")
	if len(busy) > 0 {
		sort.Strings(busy)
		r.why = "goroutines of its life are running or runnable: " + strings.Join(busy, "; ")
	}
	return r, nil
}

// group is one stack of a goroutine profile (debug=1): how many goroutines
// have it, its program counters (the top first) and its first frame that
// is not the runtime's, for messages.
type group struct {
	count  int
	pcs    []string
	where  string
	frames []string
}

// syncing is the prefix of the functions in which client-go waits for an
// informer's cache to sync, and controller-runtime too: by polling, every
// 100 ms, parked on a timer in between. A life with a goroutine there has
// not started its workers yet, however parked its goroutines are.
const syncing = "k8s.io/client-go/tools/cache.WaitFor"

// labelledGroups parses a goroutine profile in its debug=1 text form and
// returns the stacks of the goroutines whose label key is value.
func labelledGroups(profile []byte, key, value string) ([]group, error) {
	want := fmt.Sprintf("%q:%q", key, value)
	var out []group
	var cur *group
	keep := false
	sc := bufio.NewScanner(bytes.NewReader(profile))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.Contains(line, " @ ") && !strings.HasPrefix(line, "#"):
			if cur != nil && keep {
				out = append(out, *cur)
			}
			n, pcs, _ := strings.Cut(line, " @ ")
			count, err := strconv.Atoi(strings.TrimSpace(n))
			if err != nil {
				return nil, fmt.Errorf("read the goroutines: bad line %q", line)
			}
			cur, keep = &group{count: count, pcs: strings.Fields(pcs)}, false
		case cur == nil:
		case strings.HasPrefix(line, "# labels: "):
			keep = strings.Contains(line, want)
		case strings.HasPrefix(line, "#\t"):
			// #	0x4dc0d8	main.main.func1.1+0x18	/tmp/gp/main.go:13
			f := strings.Fields(line)
			if len(f) < 3 {
				continue
			}
			fn, _, _ := strings.Cut(f[2], "+0x")
			cur.frames = append(cur.frames, fn)
			if cur.where == "" && !strings.HasPrefix(fn, "runtime.") {
				cur.where = fn
			}
		}
	}
	if cur != nil && keep {
		out = append(out, *cur)
	}
	return out, sc.Err()
}

// funcName returns the function a program counter of this process's
// goroutine profile is in. A profile's counters are return addresses, one
// past the call, hence the -1.
func funcName(pc string) string {
	v, err := strconv.ParseUint(strings.TrimPrefix(pc, "0x"), 16, 64)
	if err != nil {
		return ""
	}
	if f := runtime.FuncForPC(uintptr(v) - 1); f != nil {
		return f.Name()
	}
	return ""
}

// caughtUp reports whether every watch actor has open in the life that
// began with call first has shown it every write to its resource (in its
// scope) that the trace holds, and says which does not. A write's watch
// event is sent after its answer, so right after a scenario's write a
// controller may not have it yet. Watches that a label or field selector
// narrows, whose events the recorder cannot read, or of a resource a hold
// keeps back on purpose, are not waited for; nor are resources in ignore.
func caughtUp(sc *language.Scenario, actor string, first int, ignore map[string]bool) (bool, string) {
	held := views.Held(sc, actor)
	type write struct {
		x   *record.Exchange
		rev uint64
	}
	var writes []write
	var watches []*record.Exchange
	ended := map[string]bool{} // resources whose watch of this life ended
	// What the recorder goes on adding to an exchange (a watch's events
	// shown, its end) it adds under its lock: the checks below read
	// copies taken under it.
	snapshot := func(x *record.Exchange) *record.Exchange {
		c := *x
		c.Shown = slices.Clone(x.Shown)
		return &c
	}
	sc.Recorder().Scan(func(x *record.Exchange) {
		if x.Foreign {
			return
		}
		if record.WriteVerbs[x.Verb] || x.Verb == "deletecollection" {
			if rev, ok := revision(x.GotRV); ok && x.Code >= 200 && x.Code < 300 {
				writes = append(writes, write{snapshot(x), rev})
			}
			return
		}
		if x.Verb != "watch" || x.Actor != actor || x.Seq < first || x.Code != 200 {
			return
		}
		if x.WatchEnded {
			ended[x.Resource] = true
			return
		}
		watches = append(watches, snapshot(x))
	})
	open := map[string]bool{}
	for _, w := range watches {
		open[w.Resource] = true
	}
	for res := range ended {
		if !open[res] && !held[res] && !ignore[res] {
			return false, fmt.Sprintf("its watch of %s ended and it has not watched %s again", res, res)
		}
	}
	for _, w := range watches {
		if w.WatchBlind || w.Selective || held[w.Resource] || ignore[w.Resource] {
			continue
		}
		start, numbered := revision(w.SentRV)
		seen, bookmarked := start, false
		for _, s := range w.Shown {
			if rev, ok := revision(s.RV); ok && rev > seen {
				seen = rev
			}
			bookmarked = bookmarked || s.Event == "BOOKMARK"
		}
		if w.InitialEvents && !bookmarked {
			// A watch-list's objects come first, and a bookmark ends them.
			return false, fmt.Sprintf("its watch-list of %s has not shown it every %s there is yet", w.Resource, w.Resource)
		}
		for _, wr := range writes {
			x := wr.x
			switch {
			case x.Resource != w.Resource, w.Namespace != "" && x.Namespace != w.Namespace, w.Name != "" && x.Name != w.Name:
				continue
			case !numbered && x.Seq < w.Seq && x.Start.Add(x.Duration).Before(w.Start):
				continue // made before a watch from the present began
			case wr.rev <= seen:
				continue
			}
			return false, fmt.Sprintf("its watch of %s has not shown it %s %s %s yet", w.Resource, x.Actor, x.Verb, x.Object())
		}
	}
	return true, ""
}

// revision reads a resourceVersion as the etcd revision it is.
func revision(rv string) (uint64, bool) {
	n, err := strconv.ParseUint(rv, 10, 64)
	return n, err == nil && n > 0
}

// shownObjects counts the objects the lists and watches actor made since
// call first were answered with (a watch's bookmarks and errors are no
// objects): what its informers were shown; listed says whether it made
// any list or watch that was answered.
func shownObjects(sc *language.Scenario, actor string, first int) (n int, listed bool) {
	sc.Recorder().Scan(func(x *record.Exchange) {
		if x.Actor == actor && x.Seq >= first && x.Code == 200 && (x.Verb == "list" || x.Verb == "watch") {
			listed = true
			for _, o := range x.Shown {
				if o.Event != "BOOKMARK" && o.Event != "ERROR" {
					n++
				}
			}
		}
	})
	return n, listed
}
