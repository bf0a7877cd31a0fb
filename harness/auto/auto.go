package auto

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/racekit/racekit/harness/controlplane"
	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
)

// Check reports what is wrong with an explore auto scenario before
// anything runs: nothing that runs on its own to fault (no start or spawn
// in the setup or the workload), named at the explore line.
func Check(a *explore.Auto) error {
	if len(operatorNames(a.Setup(), a.Workload())) == 0 {
		return &explore.Refusal{Pos: a.Pos(), Msg: "explore auto has no operator to fault: start NAME or spawn NAME ... -- COMMAND before the explore line (or in its do), so that its runs can restart it and show it stale views"}
	}
	return nil
}

// Explore explores the explore auto scenario a on cp (explore.AutoFunc):
// every run settles the operators the setup started before its workload
// (Prelude); the learning run, which is the first reference run; then, at most
// xo.Parallel at a time, the second reference run, each operator's
// neutral twin and the plans of the intermediate and stale classes. As
// each plan's run and its group's twins end, the oracle judges it against
// the references, sets aside what the neutral twins show too, and runs a
// finding again, once, to confirm it, while the other plans still run;
// each confirmed finding gets its regression scenario (Interleaving.Emit),
// shrunk under xo.Shrink as soon as it is confirmed (confirmer).
func Explore(ctx context.Context, cp *controlplane.ControlPlane, opts language.Options, a *explore.Auto, xo explore.Options) (*explore.Report, error) {
	if err := Check(a); err != nil {
		return nil, err
	}
	if n := xo.Shard.N; n > 0 && (xo.Shard.I < 1 || xo.Shard.I > n) {
		return nil, fmt.Errorf("shard %d/%d: want I/N with 1 ≤ I ≤ N", xo.Shard.I, n)
	}
	names := operatorNames(a.Setup(), a.Workload())
	dir, cleanup, err := explore.TempDir(cp)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	static := operatorsOf(names, nil)
	// Every run starts the workload from a settled setup: each operator
	// the setup started idle (explore.Auto.Prelude says why).
	a.Prelude(settle(operatorsOf(operatorNames(a.Setup(), ""), nil)))
	var ref1 State
	l, err := a.Learn(ctx, cp, opts, filepath.Join(dir, "learn"), append(settle(static), observe(nil)),
		func(sc *language.Scenario) { ref1 = Observed(sc) }, xo)
	if err != nil {
		return nil, err
	}
	ops := operatorsOf(names, l.Lives)
	p := &planner{ops: ops, learned: l, resources: ref1.Resources, leaders: ref1.Leaders, workload: a.Workload(), cut: map[string]bool{}}
	// First the second reference run and the neutral twins: the masks,
	// and which calls recur, come from them.
	base := p.base()
	bstates := make([]State, len(base))
	for i := range base {
		base[i].Index = i
		base[i].Done = func(sc *language.Scenario) { bstates[i] = Observed(sc) }
	}
	bils := a.Run(ctx, cp, opts, filepath.Join(dir, "base"), StageBase, base, xo)
	p.recurs = recurring(bils[0].Trace.Rows())
	refs, refILs := []State{ref1, bstates[0]}, []explore.Interleaving{bils[0]}
	if !MasksOf(refs).Empty() {
		// The two references disagree: a third shows more of what the
		// workload leaves to chance, before anything is masked by it.
		third := []explore.Plan{{Name: "reference_3", Class: ClassReference, Fault: "none (reference run 3)", Tail: base[0].Tail}}
		var st State
		third[0].Done = func(sc *language.Scenario) { st = Observed(sc) }
		ils := a.Run(ctx, cp, opts, filepath.Join(dir, "base3"), StageBase, third, xo)
		refs, refILs = append(refs, st), append(refILs, ils[0])
	}
	faults := p.faults()
	if xo.AutoNull {
		faults = append(faults, p.null()...)
	}
	if err := uniqueNames(faults); err != nil {
		return nil, fmt.Errorf("%s: %w", a.Pos(), err)
	}
	rep := a.Report(l, xo)
	rep.Total = len(faults)
	var todo []explore.Plan
	unselected := 0
	for i := range faults {
		faults[i].Index = i
		switch {
		case xo.Shard.N > 0 && !inShard(faults[i].Name, xo.Shard.I, xo.Shard.N):
		case xo.Select != nil && !xo.Select(faults[i].Name):
			unselected++
		default:
			todo = append(todo, faults[i])
		}
	}
	if unselected > 0 {
		rep.Selected = xo.Selected
	}
	// The twins faults made run with the plans (after them, so that the
	// plans keep their places).
	all := append(slices.Clip(todo), p.twins...)
	for i := len(todo); i < len(all); i++ {
		all[i].Index = len(faults) + i - len(todo)
	}
	o := newOracle(refs, refILs)
	for _, op := range ops {
		o.actors = append(o.actors, op.Actor)
	}
	sum := &explore.AutoSummary{References: len(refs), Plans: map[string]int{}, BaseMask: BaseMask,
		Runs: 1 + len(base) + len(refs) - 2 + len(all)}
	for i := 1; i < len(base); i++ {
		sum.Twins = append(sum.Twins, o.twin(p.group[base[i].Name], base[i], bstates[i], bils[i]))
	}
	sum.Masked, sum.Unstable = o.masks.List()
	c := &confirmer{ctx: ctx, cp: cp, opts: opts, a: a, dir: dir, xo: xo, p: p, base: base, rep: rep, o: o, sum: sum,
		todo: todo, all: all, states: make([]State, len(all)), ran: make([]explore.Interleaving, len(all)),
		twinsDue: map[string]int{}, waiting: map[string][]int{}, left: map[string]int{}, siblings: map[int]*sibling{}}
	c.xo.Slots = explore.NewSlots(xo.Parallel)
	c.rerun, c.shrink = c.confirm, c.shrinkOne
	for i := range all {
		if i >= len(todo) {
			c.twinsDue[p.group[all[i].Name]]++
		} else {
			c.left[p.group[all[i].Name]]++
		}
		all[i].Done = func(sc *language.Scenario) { c.states[i] = Observed(sc) }
		all[i].Then = func(il explore.Interleaving) { c.ended(i, il) }
	}
	a.Run(ctx, cp, opts, filepath.Join(dir, "runs"), StagePlans, all, c.xo)
	c.wait()
	slices.SortFunc(sum.Twins, func(a, b explore.TwinRun) int { return strings.Compare(a.Name, b.Name) })
	out := c.ran[:len(todo)]
	sum.Clock, sum.ClockRuns = byClock(append(slices.Clip(bils), c.ran...))
	rep.Interleavings = out
	rep.Auto = sum
	return rep, nil
}

// The stages of an explore auto exploration after its learning run
// (explore.Options.Stage).
const (
	StageBase    = "the second reference run and the twins"
	StagePlans   = "the plans"
	StageConfirm = "the reruns that confirm the findings"
)

// byClock returns the operators that idle settled by a quiet period in
// any of ils, sorted, and how many of ils it did so in: their verdicts
// lean on the clock (explore.AutoSummary.Clock).
func byClock(ils []explore.Interleaving) ([]string, int) {
	names, runs := map[string]bool{}, 0
	for _, il := range ils {
		quiet := false
		for _, e := range il.Trace {
			if s := e.Settled; s != nil && s.By == record.SettledByQuiet {
				names[s.Name], quiet = true, true
			}
		}
		if quiet {
			runs++
		}
	}
	return slices.Sorted(maps.Keys(names)), runs
}

// inShard reports whether the run called name belongs to shard i of n,
// as explore splits its runs.
func inShard(name string, i, n int) bool {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32()%uint32(n)) == i-1
}

// uniqueNames returns an error naming two plans of one name.
func uniqueNames(plans []explore.Plan) error {
	seen := map[string]bool{}
	for _, p := range plans {
		if seen[p.Name] {
			return fmt.Errorf("two plans are called %s", p.Name)
		}
		seen[p.Name] = true
	}
	return nil
}

// oracle judges the runs of plans against the reference runs: their end
// states, histories and failures, with the masks the references make, and
// without what the neutral twins show too.
type oracle struct {
	ref      State
	masks    Masks
	refFails map[string]bool
	// twins are what each group's neutral twin showed (planner.group).
	twins map[string][]explore.Difference
	// actors are the operators' actors, whose last writes retrying reads.
	actors []string
}

// newOracle returns the oracle of the reference runs' end states refs,
// the learning run's first, and the interleavings of the others, ils (a
// failure one of them had is no plan's difference).
func newOracle(refs []State, ils []explore.Interleaving) *oracle {
	o := &oracle{ref: refs[0], masks: MasksOf(refs), refFails: map[string]bool{}, twins: map[string][]explore.Difference{}}
	for _, il := range ils {
		for _, f := range il.Failures {
			o.refFails[signature(f)] = true
		}
	}
	return o
}

// twin notes what a neutral twin's run shows against the references:
// a plan's difference it shows too is set aside. It returns the run as
// the report lists it (explore.AutoSummary.Twins).
func (o *oracle) twin(group string, p explore.Plan, st State, il explore.Interleaving) explore.TwinRun {
	ds := o.differences(st, il)
	o.twins[group] = append(o.twins[group], ds...)
	return explore.TwinRun{Name: p.Name, Fault: p.Fault, Group: group, Read: st.Read, Differences: ds}
}

// signature is what makes two failures the same one across runs: the
// kind and the command that failed.
func signature(f language.Failure) string { return string(f.Kind) + " " + f.Command }

// differences returns what the run il, whose end state is st, has that
// the references do not: in its end state and history, and each failure
// of its that no reference had (a workload command that failed, an
// operator that exited, a wait that never ended).
func (o *oracle) differences(st State, il explore.Interleaving) []explore.Difference {
	ds := Diff(o.ref, st, o.masks)
	failed := false
	for _, f := range il.Failures {
		if f.Tolerated || f.Kind == language.FailUnfired || o.refFails[signature(f)] {
			continue
		}
		failed = true
		msg, _, _ := strings.Cut(f.Summary(), "\n")
		ds = append(ds, explore.Difference{Kind: "failure", Object: f.Command, Field: string(f.Kind), Reference: "no such failure", Run: msg})
	}
	if !st.Read && !failed {
		ds = append(ds, explore.Difference{Kind: "failure", Object: "auto-observe", Field: "end state", Reference: "read", Run: "the run ended before its end state was read"})
	}
	return ds
}

// judged counts the differences judge set aside, and why: a twin showed
// them too (discarded); a condition carried a 409 the run met (echoed);
// the operator waits to retry a 409 (unsettled: end-state differences).
type judged struct{ discarded, echoed, unsettled int }

// judge sets il's outcome by the oracle: a failure when it has
// differences the neutral twins do not, that do not merely echo a 409 the
// fault brought (echoes); n/a when explore found its moment never came,
// when it came only once the end state was being read (State.Late), when
// a hook of its never fired, or when it could not start; a pass
// otherwise. It returns how many
// differences it set aside, and why.
func (o *oracle) judge(il *explore.Interleaving, st State, group string) judged {
	var j judged
	var ds []explore.Difference
	ds, j.discarded = Without(o.differences(st, *il), o.twins[group])
	rows := il.Trace.Rows()
	ds, j.echoed = echoes(ds, rows, o.actors)
	if retrying(rows, o.actors) {
		ds, j.unsettled = historyAndFailures(ds)
	}
	keepNA := il.NotApplicable && !strings.HasPrefix(il.NotApplicableWhy, "interferer failed")
	switch {
	case keepNA:
		il.Passed, il.Failure = false, ""
		ds = nil
	case len(st.Late) > 0:
		// The fault came after the end state was read (its moment, an
		// operator's poll, came later than in the learning run): the
		// state read is the workload's without the fault, and any
		// difference is not the fault's.
		il.Passed, il.Failure = false, ""
		il.NotApplicable, il.NotApplicableWhy = true, "its moment came only after the end state was read: "+strings.Join(st.Late, "; ")
		ds = nil
	case len(unfired(il.Failures)) > 0:
		// A hook of the plan never fired: its fault was not made as
		// planned (a hold never released: a window whose last moment
		// waited, in this run, for what the hold hid), and what the run
		// did is not what the plan asks of the operator.
		il.Passed, il.Failure = false, ""
		il.NotApplicable, il.NotApplicableWhy = true, "its fault was not made as planned: "+strings.Join(unfired(il.Failures), "; ")+" never came"
		ds = nil
	case len(ds) > 0:
		il.Passed, il.NotApplicable, il.NotApplicableWhy = false, false, ""
		il.Failure = describe(ds)
	case il.NotApplicable:
	case !st.Read:
		// A failure ended the run before its end state was read, and
		// the twin failed so too: nothing says what the plan's fault
		// did, so it is no pass.
		il.Passed, il.Failure = false, ""
		il.NotApplicable, il.NotApplicableWhy = true, "its end state was never read, as in its neutral twin: "+firstFailure(il.Failures)
	default:
		il.Passed, il.Failure = true, ""
	}
	il.Differences = ds
	return j
}

// unfired returns the triggers of the hooks of fs that never fired.
func unfired(fs []language.Failure) []string {
	var out []string
	for _, f := range fs {
		if f.Kind == language.FailUnfired && f.Hook != nil {
			out = append(out, f.Hook.Trigger)
		}
	}
	return out
}

// firstFailure returns the first line of the first failure of fs that
// counts (not tolerated, not an unfired hook), or "none".
func firstFailure(fs []language.Failure) string {
	for _, f := range fs {
		if !f.Tolerated && f.Kind != language.FailUnfired {
			msg, _, _ := strings.Cut(f.Summary(), "\n")
			return msg
		}
	}
	return "none"
}

// stalled makes il, the run of a plan whose workload had waits cut, n/a
// when the workload's line (line) failed in it: a later command of the
// workload needed what the cut waits waited for (a create of a name the
// hidden delete had not freed yet), so the state the hold hid is one the
// workload cannot do without, and the run says nothing of the operator.
func stalled(il *explore.Interleaving, line int) {
	for _, f := range il.Failures {
		if f.Line == line && !f.Tolerated && f.Kind != language.FailUnfired {
			msg, _, _ := strings.Cut(f.Summary(), "\n")
			il.NotApplicable, il.NotApplicableWhy = true, "the workload needs what the hold hid: "+msg
			return
		}
	}
}

// retrying reports whether one of actors' last write to some object in
// rows was refused with 409 Conflict: a controller that retries on error
// waits for it in its workqueue's back-off, which no signal idle reads
// shows (the depth counts the items ready now), so the run's end state is
// not its last word. By object, since the reconcile that met the 409 may
// then write the error to the status, and that write takes.
func retrying(rows []record.Row, actors []string) bool {
	last := map[string]int{}
	for _, r := range rows {
		if r.Service == "" && (record.WriteVerbs[r.Verb] || r.Verb == "deletecollection") && slices.Contains(actors, r.Actor) {
			last[r.Actor+" "+r.Object] = r.Code
		}
	}
	for _, code := range last {
		if code == 409 {
			return true
		}
	}
	return false
}

// historyAndFailures returns of ds the differences in creates and
// deletes and the failures, which a retry cannot undo, and how many end-
// state differences it left out.
func historyAndFailures(ds []explore.Difference) ([]explore.Difference, int) {
	var out []explore.Difference
	for _, d := range ds {
		if d.Kind == "history" || d.Kind == "failure" {
			out = append(out, d)
		}
	}
	return out, len(ds) - len(out)
}

// confirm keeps of il's differences those its rerun showed too (by Key);
// when none, il is flaky: no failure.
func (o *oracle) confirm(il *explore.Interleaving, rerun explore.Interleaving) {
	again := map[string]bool{}
	for _, d := range rerun.Differences {
		again[Key(d)] = true
	}
	var kept []explore.Difference
	for _, d := range il.Differences {
		if again[Key(d)] {
			kept = append(kept, d)
		}
	}
	if len(kept) == 0 {
		il.Flaky, il.NotApplicable = true, true
		il.NotApplicableWhy = "flaky: a rerun did not show it again"
		return
	}
	il.Differences = kept
	il.Failure = describe(kept)
}
