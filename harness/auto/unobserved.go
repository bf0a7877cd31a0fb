package auto

import (
	"fmt"
	"strings"

	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/record"
)

// Window is a span of the learning run's workload in which others wrote
// one object at least twice and the operator wrote nothing: First and
// Last are the sequence numbers of the first and last of those writes.
type Window struct {
	Resource, Object string
	First, Last      int
}

// windows returns, for each resource of watches, the windows of rows'
// workload calls (those after from) on each of its objects: the longest
// runs of successful writes by others than actor, at least two, with no
// write of actor's in between. A window with a write of the operator's
// inside would hold back its own write's event and every wait on it, and
// the workload would stop at its first wait for the operator; a window of
// one write hides no state.
func windows(rows []record.Row, from int, actor string, watches []string) []Window {
	var out []Window
	for _, res := range watches {
		byObject := map[string][]int{}
		var objects []string
		var own []int
		for _, r := range rows {
			rres, _, _ := strings.Cut(r.Object, "/")
			if r.Seq <= from || r.Code/100 != 2 || r.Service != "" || r.OtherNamespace != "" || !record.WriteVerbs[r.Verb] {
				continue
			}
			if r.Actor == actor {
				own = append(own, r.Seq)
				continue
			}
			if rres != res {
				continue
			}
			obj := objectOf(r.Object)
			if _, ok := byObject[obj]; !ok {
				objects = append(objects, obj)
			}
			byObject[obj] = append(byObject[obj], r.Seq)
		}
		for _, obj := range objects {
			ws := byObject[obj]
			start := 0
			for i := 1; i <= len(ws); i++ {
				if i < len(ws) && !anyBetween(own, ws[i-1], ws[i]) {
					continue
				}
				if i-start >= 2 {
					out = append(out, Window{Resource: res, Object: obj, First: ws[start], Last: ws[i-1]})
				}
				start = i
			}
		}
	}
	return out
}

// objectOf returns a trace object's resource and name, without a
// subresource: deployments/web/status is deployments/web.
func objectOf(object string) string {
	parts := strings.SplitN(object, "/", 3)
	if len(parts) < 2 {
		return object
	}
	return parts[0] + "/" + parts[1]
}

// anyBetween reports whether a number of seqs lies strictly between a
// and b.
func anyBetween(seqs []int, a, b int) bool {
	for _, s := range seqs {
		if s > a && s < b {
			return true
		}
	}
	return false
}

// momentAt returns the index of l's moment at point of the call seq, or
// -1 when the call is no moment of the workload.
func momentAt(l *explore.Learned, point string, seq int) int {
	for i, m := range l.Moments {
		if l.Seq[i] == seq && m.Point == point {
			return i
		}
	}
	return -1
}

// unobserved returns op's plans of the unobserved class: for each window
// (windows), a hold of op's watch of the resource before the window's
// first write and its release with a relist after the last, so that op
// sees only the last state; then the wait for that relist and the
// settling. Each plan's neutral twin holds and releases the same watch
// right after the last write, with nothing written in between.
func (p *planner) unobserved(op Operator) []explore.Plan {
	l := p.learned
	rows := l.Trace.Rows()
	obs := observe(p.resources)
	var out []explore.Plan
	for _, w := range windows(rows, l.From, op.Actor, watched(rows, op.Actor)) {
		i, j := momentAt(l, "before", w.First), momentAt(l, "after", w.Last)
		if i < 0 || j < 0 || !p.recurs(l.Moments[i]) || !p.recurs(l.Moments[j]) {
			continue
		}
		hold := "hold " + op.Actor + " " + w.Resource
		release := "release " + op.Actor + " " + w.Resource + " relist"
		tail := append([]string{fmt.Sprintf("await %s list %s 200 since=%s", op.Actor, w.Resource, windowMark)}, settle(p.ops)...)
		tail = append(tail, obs)
		n := name("unobserved", w.Object, l.Moments[i].Name(), l.Moments[j].Name())
		g := "unobserved " + op.Name + " " + w.Object
		p.grouped(n, g)
		out = append(out, explore.Plan{Name: n, Class: ClassUnobserved,
			Fault: fmt.Sprintf("%s %s; %s %s", hold, l.Moments[i].Trigger(), release, l.Moments[j].Trigger()),
			Heads: []string{"mark " + windowMark},
			Hooks: []explore.Hook{{Moment: l.Moments[i], Interferer: hold}, {Moment: l.Moments[j], Interferer: release}},
			Tail:  tail})
		tn := name("twin_unobserved", w.Object, l.Moments[j].Name())
		if p.group[tn] == "" {
			p.grouped(tn, g)
			p.twins = append(p.twins, explore.Plan{Name: tn, Class: ClassTwin,
				Fault: fmt.Sprintf("%s; %s %s: nothing written while held", hold, release, l.Moments[j].Trigger()),
				Heads: []string{"mark " + windowMark},
				Hooks: []explore.Hook{{Moment: l.Moments[j], Interferer: "do " + hold + " ; " + release}},
				Tail:  tail})
		}
	}
	return out
}
