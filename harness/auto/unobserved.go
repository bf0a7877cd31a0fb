package auto

import (
	"fmt"
	"strings"

	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/record"
)

// Window is a span of the learning run's workload in which others wrote
// one object at least twice: First and Last are the sequence numbers of
// the first and last of those writes. Across says that the operator wrote
// in between (Windows): a window across its writes is planned only when
// the workload names each of the window's writes, so that its waits in
// between can be left out (cut).
type Window struct {
	Resource, Object string
	First, Last      int
	Across           bool
	// Writes is how many writes of others' the window spans.
	Writes int
}

// windows returns, for each resource of watches, the windows of rows'
// workload calls (those after from) on each of its objects: the longest
// runs of successful writes by others than actor, at least two, with no
// write of actor's in between; and, when actor wrote between some of
// them, one window across all of the object's writes by others
// (Across). A hold across the operator's own writes holds back their
// events too, and a wait of the workload's for the operator in between
// waits for what the hold hides: such a window is planned only with
// those waits cut (cut). A window of one write hides no state.
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
			start, split := 0, false
			for i := 1; i <= len(ws); i++ {
				if i < len(ws) && !anyBetween(own, ws[i-1], ws[i]) {
					continue
				}
				if i < len(ws) {
					split = true
				}
				if i-start >= 2 {
					out = append(out, Window{Resource: res, Object: obj, First: ws[start], Last: ws[i-1], Writes: i - start})
				}
				start = i
			}
			if split {
				out = append(out, Window{Resource: res, Object: obj, First: ws[0], Last: ws[len(ws)-1], Across: true, Writes: len(ws)})
			}
		}
	}
	return out
}

// namedWriters are the writers that name the object they write as their
// second argument (ACTOR RESOURCE/NAME): the workload lines cut can tell
// the writes of.
var namedWriters = map[string]bool{"adopt": true, "annotate": true, "bump": true, "delete": true, "patch": true, "scale": true}

// waits are the commands that wait for what NAME or ACTOR (their first
// argument) does.
var waits = map[string]bool{"await": true, "idle": true}

// parts returns the commands of a do workload, each trimmed, or nil when
// the workload is one command.
func parts(workload string) []string {
	f := strings.Fields(workload)
	if len(f) == 0 || f[0] != "do" {
		return nil
	}
	var out []string
	for _, part := range strings.Split(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(workload), "do")), " ; ") {
		out = append(out, strings.TrimSpace(part))
	}
	return out
}

// cut returns the workload of an unobserved plan of w across the
// operator op's writes: workload without its waits for op (await ACTOR,
// idle NAME) between the commands that make w's first and last writes,
// which could only wait for what the hold hides; dropped says how many
// it left out. It fails (ok false) unless the workload is a do whose
// named writers of w.Object (namedWriters) are w's writes, one each, so
// that those commands are known.
func cut(workload string, w Window, op Operator) (out string, dropped int, ok bool) {
	ps := parts(workload)
	var at []int
	for i, p := range ps {
		f := strings.Fields(p)
		if len(f) >= 3 && namedWriters[f[0]] && objectOf(f[2]) == w.Object {
			at = append(at, i)
		}
	}
	if len(at) != w.Writes || len(at) < 2 {
		return "", 0, false
	}
	var kept []string
	for i, p := range ps {
		f := strings.Fields(p)
		if i > at[0] && i < at[len(at)-1] && len(f) >= 2 && waits[f[0]] &&
			((f[0] == "await" && f[1] == op.Actor) || (f[0] == "idle" && f[1] == op.Name)) {
			dropped++
			continue
		}
		kept = append(kept, p)
	}
	return "do " + strings.Join(kept, " ; "), dropped, true
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
// settling. A window across op's own writes runs the workload with op's
// waits in it cut (cut), and is no plan when they cannot be. Each plan's
// neutral twin holds and releases the same watch right after the last
// write, with nothing written in between, and the whole workload.
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
		var workload string
		fault := ""
		if w.Across {
			cutTo, dropped, ok := cut(p.workload, w, op)
			if !ok {
				continue
			}
			if dropped > 0 {
				workload = cutTo
				fault = fmt.Sprintf(" (the workload's %d wait(s) for %s in between cut)", dropped, op.Name)
			}
		}
		hold := "hold " + op.Actor + " " + w.Resource
		release := "release " + op.Actor + " " + w.Resource + " relist"
		// The relist ends in a new watch, whether the informer lists
		// first (an older client-go) or streams the list on the watch
		// itself (watch-list).
		tail := append([]string{fmt.Sprintf("await %s watch %s 200 since=%s", op.Actor, w.Resource, windowMark)}, settle(p.ops)...)
		tail = append(tail, obs)
		n := name("unobserved", w.Object, l.Moments[i].Name(), l.Moments[j].Name())
		g := "unobserved " + op.Name + " " + w.Object
		p.grouped(n, g)
		if workload != "" {
			p.cut[n] = true
		}
		out = append(out, explore.Plan{Name: n, Class: ClassUnobserved,
			Fault:    fmt.Sprintf("%s %s; %s %s%s", hold, l.Moments[i].Trigger(), release, l.Moments[j].Trigger(), fault),
			Heads:    []string{"mark " + windowMark},
			Hooks:    []explore.Hook{{Moment: l.Moments[i], Interferer: hold}, {Moment: l.Moments[j], Interferer: release}},
			Tail:     tail,
			Workload: workload})
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
