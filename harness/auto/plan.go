package auto

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/record"
)

// The classes of plan, as the report names them.
const (
	ClassReference    = "reference"
	ClassTwin         = "twin"
	ClassIntermediate = "intermediate"
	ClassStale        = "stale"
	ClassUnobserved   = "unobserved"
	ClassNull         = "null"
)

// The marks the plans take; a scenario's own marks of these names are
// overwritten in the runs.
const (
	staleMark   = "auto-stale"
	restartMark = "auto-restart"
	windowMark  = "auto-window"
)

// settle returns the lines that settle every operator: idle of each.
func settle(ops []Operator) []string {
	var out []string
	for _, op := range ops {
		out = append(out, "idle "+op.Name)
	}
	return out
}

// observe returns the line that reads the end state, with the resources
// the learning run touched, so that a run that touched fewer reads them
// too.
func observe(resources []string) string {
	return strings.TrimSpace("auto-observe " + strings.Join(resources, " "))
}

// restartTail returns the lines after the workload of a plan that
// restarts op once every operator has settled: against a view of
// resource as of the stale mark when resource is set (stale), or
// fresh (the neutral twin); then the wait for its new life's watch of
// watch, and the settling again.
func restartTail(ops []Operator, op Operator, resource, watch string) []string {
	tail := settle(ops)
	tail = append(tail, "mark "+restartMark)
	if resource != "" {
		tail = append(tail, fmt.Sprintf("restart %s stale %s at=%s", op.Name, resource, staleMark))
	} else {
		tail = append(tail, "restart "+op.Name)
	}
	if watch != "" {
		tail = append(tail, fmt.Sprintf("await %s watch %s 200 since=%s", op.Actor, watch, restartMark))
	}
	tail = append(tail, settle(ops)...)
	if resource != "" {
		// The stale view ends, as a lagging API server catches up: what
		// the operator did against it and undoes once it sees the
		// present is no finding; what it cannot undo (a delete) is. It
		// catches up one event at a time, the operator settled after
		// each, so that it reconciles every state in between on every
		// run: with a release, which delivers them at once, whether a
		// reconcile read the old cluster with its deletionTimestamp or
		// the new one was a race of the operator's informer against its
		// worker (rabbitmq v1.7.0's stale plan of rabbitmqclusters).
		tail = append(tail, fmt.Sprintf("catch-up %s %s", op.Name, resource))
		tail = append(tail, settle(ops)...)
	}
	return tail
}

// rowsBySeq returns rows by sequence number.
func rowsBySeq(rows []record.Row) map[int]record.Row {
	out := map[int]record.Row{}
	for _, r := range rows {
		if r.Seq > 0 {
			out[r.Seq] = r
		}
	}
	return out
}

// writesTo returns the sequence numbers of rows' successful writes to an
// object of resource (a create, update, patch, delete or deletecollection
// answered 2xx), in order.
func writesTo(rows []record.Row, resource string) []int {
	var out []int
	for _, r := range rows {
		res, _, _ := strings.Cut(r.Object, "/")
		if res != resource || r.Code/100 != 2 || r.Service != "" || r.OtherNamespace != "" {
			continue
		}
		if record.WriteVerbs[r.Verb] || r.Verb == "deletecollection" {
			out = append(out, r.Seq)
		}
	}
	return out
}

// prefix renders the writes of writes that came before a moment whose
// call is seq: before it is sent, those sent earlier; after its answer,
// it too.
func prefix(writes []int, point string, seq int) string {
	var parts []string
	for _, w := range writes {
		if w < seq || point == "after" && w == seq {
			parts = append(parts, strconv.Itoa(w))
		}
	}
	return strings.Join(parts, ",")
}

var notName = regexp.MustCompile(`[^a-zA-Z0-9-]+`)

// name makes a run name of words.
func name(words ...string) string {
	return strings.Trim(notName.ReplaceAllString(strings.Join(words, "_"), "_"), "_")
}

// planner makes an explore auto exploration's plans from its learning run.
type planner struct {
	ops       []Operator
	learned   *explore.Learned
	resources []string // what auto-observe reads
	// leaders are the learning run's leader-election records, which no
	// moment is planned at (LeaderRecord).
	leaders  map[string]bool
	workload string // the explore auto line's command
	// recurs reports whether a moment's call came in the second
	// reference run too: a call on an object of a name of the run's own
	// (an event's) never comes again, and is no moment to plan at.
	recurs func(explore.Moment) bool
	// group says, by plan name, which neutral twin a plan is compared
	// with: "restart NAME" for a plain restart, "stale NAME RESOURCE"
	// for a restart against a view of RESOURCE.
	group map[string]string
	// twins are the neutral twins faults makes with the plans they are
	// twins of (the unobserved class's), which Explore runs with the
	// plans, before the oracle judges them.
	twins []explore.Plan
	// cut says, by plan name, which plans run the workload with waits
	// left out (an unobserved window across the operator's writes):
	// when the workload itself fails in one, the workload could not go
	// on without the operator seeing what the hold hid, and the run is
	// n/a (Explore).
	cut map[string]bool
}

// grouped notes that the plan called name belongs with twin group g.
func (p *planner) grouped(name, g string) {
	if p.group == nil {
		p.group = map[string]string{}
	}
	p.group[name] = g
}

// recurring returns what tells whether a moment's call, the occ-th of its
// actor, verb and object, came in rows too.
func recurring(rows []record.Row) func(explore.Moment) bool {
	n := map[string]int{}
	for _, r := range rows {
		if r.Actor != "" && r.Verb != "" {
			n[r.Actor+" "+r.Verb+" "+r.Object]++
		}
	}
	return func(m explore.Moment) bool { return n[m.Actor+" "+m.Verb+" "+m.Object] >= m.Occ }
}

// plannable reports whether the learning run's moment i is one to plan
// at: one explore explores, whose call recurs, on no leader-election
// record.
func (p *planner) plannable(i int) bool {
	m := p.learned.Moments[i]
	return p.learned.Kept[i] && !unrecorded(m.Object) && !p.leaders[m.Object] && (p.recurs == nil || p.recurs(m))
}

// base returns the plans every exploration runs besides its faults: the
// second reference run and each operator's neutral twin (a restart after
// the workload with a fresh view), with tails, unnumbered.
func (p *planner) base() []explore.Plan {
	obs := observe(p.resources)
	out := []explore.Plan{{Name: "reference_2", Class: ClassReference, Fault: "none (reference run 2)",
		Tail: append(settle(p.ops), obs)}}
	for _, op := range p.ops {
		ws := watched(p.learned.Trace.Rows(), op.Actor)
		w := ""
		if len(ws) > 0 {
			w = ws[0]
		}
		n := name("twin_restart", op.Name, "after_the_workload")
		p.grouped(n, "restart "+op.Name)
		out = append(out, explore.Plan{Name: n, Class: ClassTwin,
			Fault: "restart " + op.Name + " after the workload (fresh)", Tail: append(restartTail(p.ops, op, "", w), obs)})
	}
	return out
}

// staleTwin returns the neutral twin of op's stale plans of res: the same
// restart against a view of res as of a mark taken right before it, so
// nothing is stale but the held watch itself. faults makes one for each
// resource it made a stale plan of, and none for the others.
func (p *planner) staleTwin(op Operator, res string) explore.Plan {
	n := name("twin_stale", op.Name, res)
	p.grouped(n, "stale "+op.Name+" "+res)
	tail := append(append(settle(p.ops), "mark "+staleMark), restartTail(p.ops, op, res, p.awaited(op, res))...)
	return explore.Plan{Name: n, Class: ClassTwin,
		Fault: fmt.Sprintf("restart %s stale %s as of now (nothing stale)", op.Name, res), Tail: append(tail, observe(p.resources))}
}

// awaited returns the resource whose new watch a restart of op against a
// stale view of res waits for before it settles op: res itself when op's
// first life watched it as it started (before its first write), as
// informers of the resources a controller reconciles and owns start;
// otherwise the first resource op watched. A resource watched only once a
// reconcile read it (controller-runtime starts such an informer at a
// cache's first Get) may never be watched by a restarted life that finds
// nothing to do, and waiting for its watch waited out the wait's whole
// bound (rabbitmq's pods, 30 s a run); idle after the restart still waits
// for every reconcile the new life takes, whatever it reads.
func (p *planner) awaited(op Operator, res string) string {
	eager := eagerWatches(p.learned.Trace.Rows(), op.Actor)
	if slices.Contains(eager, res) || len(eager) == 0 {
		return res
	}
	return eager[0]
}

// faults returns the plans of the intermediate, stale and unobserved
// classes (unobserved.go), unnumbered, in order: by operator, class, then
// moment.
//
// Intermediate: a restart of the operator at each moment of its own
// writes that took effect (before it is sent, after its answer), each a
// moment explore explores (Learned.Kept); the moment after an update
// answered with the resourceVersion it sent changed nothing, and is left
// out.
//
// Stale: for each resource the operator lists or watches, a mark at each
// moment explore explores, and before the workload; after the workload,
// a restart of the operator against its view of that resource as of the
// mark. Two marks after the same writes to the resource are one plan,
// and a mark after every write of the learning run is the view at the
// restart itself (the twin), and is left out.
func (p *planner) faults() []explore.Plan {
	l := p.learned
	rows := l.Trace.Rows()
	bySeq := rowsBySeq(rows)
	obs := observe(p.resources)
	var out []explore.Plan
	for _, op := range p.ops {
		for i, m := range l.Moments {
			r := bySeq[l.Seq[i]]
			if !p.plannable(i) || m.Actor != op.Actor || !(record.WriteVerbs[m.Verb] || m.Verb == "deletecollection") || r.Code/100 != 2 {
				continue
			}
			if m.Point == "after" && r.SentRV != "" && r.SentRV == r.GotRV {
				continue
			}
			h := explore.Hook{Moment: m, Interferer: "restart " + op.Name}
			p.grouped(name("intermediate", m.Name()), "restart "+op.Name)
			out = append(out, explore.Plan{Name: name("intermediate", m.Name()), Class: ClassIntermediate,
				Fault: h.Interferer, Hooks: []explore.Hook{h}, Tail: append(settle(p.ops), obs)})
		}
		for _, res := range watched(rows, op.Actor) {
			writes := writesTo(rows, res)
			all := prefix(writes, "after", int(^uint(0)>>1))
			tail := append(restartTail(p.ops, op, res, p.awaited(op, res)), obs)
			plans := len(out)
			fault := fmt.Sprintf("mark; restart %s stale %s at the mark", op.Name, res)
			seen := map[string]bool{all: true}
			if pre := prefix(writes, "before", l.From+1); !seen[pre] {
				seen[pre] = true
				p.grouped(name("stale", res, "before_the_workload"), "stale "+op.Name+" "+res)
				out = append(out, explore.Plan{Name: name("stale", res, "before_the_workload"), Class: ClassStale, Fault: fault,
					Heads: []string{"mark " + staleMark}, Tail: tail})
			}
			for _, i := range markAt(l, writes, p.plannable) {
				m := l.Moments[i]
				pre := prefix(writes, m.Point, l.Seq[i])
				if seen[pre] {
					continue
				}
				seen[pre] = true
				h := explore.Hook{Moment: m, Interferer: "mark " + staleMark}
				p.grouped(name("stale", res, m.Name()), "stale "+op.Name+" "+res)
				out = append(out, explore.Plan{Name: name("stale", res, m.Name()), Class: ClassStale, Fault: fault,
					Hooks: []explore.Hook{h}, Heads: []string{"mark " + staleMark}, Tail: tail})
			}
			if len(out) > plans {
				p.twins = append(p.twins, p.staleTwin(op, res))
			}
		}
	}
	for _, op := range p.ops {
		out = append(out, p.unobserved(op)...)
	}
	return out
}

// markAt returns, of the learning run l's moments that plannable keeps,
// one per distinct prefix of writes (the view a mark there gives), in
// order of their first moment. A moment is chosen by the writes to the
// resource themselves, since they come in every run in the same order:
// right after the prefix's last write, else right before the next write
// to the resource; else the first moment of that prefix. A moment named
// by another call (the 1st of an operator's status updates, say) falls
// on the other side of a write in a run whose calls come in another
// order, and its mark gives another view.
func markAt(l *explore.Learned, writes []int, plannable func(int) bool) []int {
	var order []string
	first := map[string]int{}
	after := map[string]int{}
	before := map[string]int{}
	for i, m := range l.Moments {
		if !plannable(i) {
			continue
		}
		pre := prefix(writes, m.Point, l.Seq[i])
		if _, ok := first[pre]; !ok {
			first[pre] = i
			order = append(order, pre)
		}
		if _, ok := after[pre]; !ok && m.Point == "after" && lastOf(pre) == l.Seq[i] {
			after[pre] = i
		}
		if _, ok := before[pre]; !ok && m.Point == "before" && slices.Contains(writes, l.Seq[i]) {
			before[pre] = i
		}
	}
	out := make([]int, 0, len(order))
	for _, pre := range order {
		i, ok := after[pre]
		if !ok {
			i, ok = before[pre]
		}
		if !ok {
			i = first[pre]
		}
		out = append(out, i)
	}
	return out
}

// lastOf returns the last sequence number of a prefix, or 0 when it is
// empty.
func lastOf(pre string) int {
	n, _ := strconv.Atoi(pre[strings.LastIndex(pre, ",")+1:])
	return n
}

// null returns the plans whose fault cannot matter: a mark with no
// restart at each moment explore explores (of the first operator's
// calls, and the first of anyone's). None may be a finding.
func (p *planner) null() []explore.Plan {
	obs := observe(p.resources)
	var out []explore.Plan
	for i, m := range p.learned.Moments {
		if !p.plannable(i) {
			continue
		}
		h := explore.Hook{Moment: m, Interferer: "mark " + staleMark}
		out = append(out, explore.Plan{Name: name("null_mark", m.Name()), Class: ClassNull, Fault: "mark, no restart",
			Hooks: []explore.Hook{h}, Tail: append(settle(p.ops), obs)})
	}
	return out
}
