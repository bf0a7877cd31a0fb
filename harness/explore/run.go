package explore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/racekit/racekit/harness/controlplane"
	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/harness/running"
	"github.com/racekit/racekit/hooks"
)

// errLearning is returned, wrapped, when the workload alone fails.
var errLearning = errors.New("the learning run failed")

// Options tunes Explore.
type Options struct {
	// Depth overrides the explore line's depth=N; 0 keeps it.
	Depth int
	// Progress, if set, is called after each interleaving ends, with how
	// many have ended, of how many, and how many failed so far; calls are
	// serialized.
	Progress func(done, total, failed int)
	// Stage, if set, is called as each stage of the exploration begins,
	// with what it is ("the learning run", "the runs"; explore auto's
	// stages: its second reference run and twins, its plans, the reruns
	// that confirm its findings) and how many runs it holds (1 for the
	// learning run): what a report of an interrupted exploration says it
	// was doing (racekit explore). Progress counts the runs of the stage.
	Stage func(what string, runs int)
	// Shard, if N is set, runs the runs of shard I of N (1 ≤ I ≤ N): a split
	// by each run's name, the same on every machine, so that N processes,
	// anywhere, run every run once between them (Merge joins them).
	Shard struct{ I, N int }
	// Select, if set, runs only the runs whose names it accepts, such as
	// those go test -run names (commands.go); Selected says how, for
	// the report.
	Select   func(name string) bool
	Selected string
	// Exhaustive explores every moment, the equivalent ones and those
	// that race with a controller that runs on its own too: what the
	// rules that leave them out (moments) must not change the verdicts
	// of, and the tests that they do not.
	Exhaustive bool
	// Variant names the teaching variant opts' controllers run ("" for
	// the production controller), for the report's identity: Merge
	// refuses to join explorations of different variants.
	Variant string
	// Parallel bounds the interleavings that run at once; 0 means
	// DefaultParallel.
	Parallel int
	// Slots, when set, are the runs under way that this exploration's
	// stages share with other work (explore auto's confirming reruns and
	// its shrinker run while its plans do): Parallel bounds them all
	// together, not each stage alone.
	Slots *Slots
	// Auto explores an explore auto line (package auto's Explore, which
	// the façade gives); without it such a line is refused.
	Auto AutoFunc
	// AutoNull adds, to an explore auto exploration, the plans whose
	// fault cannot matter (a mark with no restart, a restart after the
	// workload with a fresh view): none may be a finding, and the tests
	// check that none is.
	AutoNull bool
	// Shrink makes each confirmed finding's regression scenario of an
	// explore auto exploration (Interleaving.Emit) smaller: setup lines
	// and workload commands left out while it still fails at its first
	// claim and its neutral twin passes (racekit explore --emit).
	Shrink bool
}

// inShard reports whether the run called name belongs to shard i of n.
func inShard(name string, i, n int) bool {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32()%uint32(n)) == i-1
}

// Explore explores the scenario in file on cp with opts' controllers and
// commands: a learning run, then one run per moment and interferer, at
// most xo.Parallel at a time, each in a namespace of its own.
func Explore(ctx context.Context, cp *controlplane.ControlPlane, opts language.Options, file string, xo Options) (*Report, error) {
	cmds, err := language.Table(opts.Extensions, opts.Commands)
	if err != nil {
		return nil, err
	}
	e, err := parseExploration(file, cmds)
	if err != nil {
		return nil, err
	}
	if e.auto {
		if xo.Auto == nil {
			return nil, fmt.Errorf("%s:%d: %w", filepath.Base(file), e.at+1, ErrNoAuto)
		}
		if n := xo.Shard.N; n > 0 && (xo.Shard.I < 1 || xo.Shard.I > n) {
			return nil, fmt.Errorf("shard %d/%d: want I/N with 1 ≤ I ≤ N", xo.Shard.I, n)
		}
		return xo.Auto(ctx, cp, opts, &Auto{e: e}, xo)
	}
	if xo.Depth > 0 {
		if xo.Depth > MaxDepth {
			return nil, fmt.Errorf("depth %d: racekit explores at most depth %d", xo.Depth, MaxDepth)
		}
		e.depth = xo.Depth
	}
	if n := xo.Shard.N; n > 0 && (xo.Shard.I < 1 || xo.Shard.I > n) {
		return nil, fmt.Errorf("shard %d/%d: want I/N with 1 ≤ I ≤ N", xo.Shard.I, n)
	}
	dir, err := os.MkdirTemp("", "racekit-explore-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// An interrupted run exits without running defers.
	cp.OnInterrupt(func() { os.RemoveAll(dir) })
	sum := sha256.Sum256(e.content)
	rep := &Report{File: file, Script: hex.EncodeToString(sum[:]), Workload: e.workload, Invariants: e.invariants(),
		Depth: e.depth, Only: e.only, Variant: xo.Variant, Exhaustive: xo.Exhaustive}
	for _, in := range e.interferers {
		rep.Interferers = append(rep.Interferers, in.line())
	}
	xo.stage(StageLearning, 1)
	l, err := learn(ctx, cp, opts, e, filepath.Join(dir, "learn"))
	if err != nil {
		return nil, err
	}
	if xo.Exhaustive {
		l.exhaustive()
	}
	rep.Moments, rep.LeftOut, rep.Racing = l.kept()
	rep.Equivalent = len(rep.LeftOut)
	rep.Learning = l.rows
	runs, err := e.plan(l)
	if err != nil {
		return nil, err
	}
	rep.Total = len(runs)
	var todo []run
	var names []string
	unselected := 0
	for i, hs := range runs {
		name := runName(hs, len(e.interferers) > 1)
		names = append(names, name)
		switch {
		case xo.Shard.N > 0 && !inShard(name, xo.Shard.I, xo.Shard.N):
		case xo.Select != nil && !xo.Select(name):
			unselected++
		default:
			todo = append(todo, run{index: i, hooks: hs})
		}
	}
	if err := uniqueNames(names); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", filepath.Base(file), e.at+1, err)
	}
	if xo.Shard.N > 0 {
		rep.Shard = fmt.Sprintf("%d/%d", xo.Shard.I, xo.Shard.N)
	}
	if unselected > 0 {
		rep.Selected = xo.Selected
	}
	xo.stage(StageRuns, len(todo))
	rep.Interleavings = runAll(ctx, cp, opts, e, dir, todo, xo.slots(), xo.Progress)
	if err := interfererFails(e, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// The stages of an exploration (Options.Stage); explore auto's are in
// package auto.
const (
	StageLearning = "the learning run"
	StageRuns     = "the runs"
)

// stage tells xo.Stage, if set, that a stage of runs runs begins.
func (xo Options) stage(what string, runs int) {
	if xo.Stage != nil {
		xo.Stage(what, runs)
	}
}

// run is one of an exploration's runs: its place among them all, and the
// hooks it arms; or, for an explore auto line, the plan it runs.
type run struct {
	index int
	hooks []Hook
	plan  *Plan
}

// runAll runs todo, as many at a time as slots allow, each in a folder of
// its own under dir, and returns their outcomes in todo's order; progress,
// if set, hears of each run's end, and a plan's Then of its own, once its
// slot is free again.
func runAll(ctx context.Context, cp *controlplane.ControlPlane, opts language.Options, e *exploration, dir string, todo []run, slots *Slots, progress func(done, total, failed int)) []Interleaving {
	out := make([]Interleaving, len(todo))
	var mu sync.Mutex
	done, failed := 0, 0
	var wg sync.WaitGroup
	for i, r := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r.plan != nil && r.plan.Then != nil {
				// After the slot is given back (deferred calls run
				// last in first out), with the run's outcome whole.
				defer func() { r.plan.Then(out[i]) }()
			}
			defer slots.Take(1)()
			var il Interleaving
			switch {
			case cp.Interrupted():
				// The control plane is going and the process with it:
				// a run started now would only fail, and its work
				// folder race the removal of the control plane's.
				il = Interleaving{Hooks: r.hooks, NotApplicable: true}
			case r.plan != nil:
				il = runPlan(ctx, cp, opts, e, filepath.Join(dir, strconv.Itoa(r.index)), *r.plan)
			default:
				il = interleave(ctx, cp, opts, e, filepath.Join(dir, strconv.Itoa(r.index)), r.hooks, len(e.interferers) > 1)
			}
			il.Index = r.index
			out[i] = il
			mu.Lock()
			defer mu.Unlock()
			done++
			if !il.Passed && !il.NotApplicable {
				failed++
			}
			if progress != nil {
				progress(done, len(todo), failed)
			}
		}()
	}
	wg.Wait()
	return out
}

// learn runs the learning run: the script up to the explore line, then the
// workload alone, behind a marker that notes where its calls start. It
// returns the workload's moments.
func learn(ctx context.Context, cp *controlplane.ControlPlane, opts language.Options, e *exploration, dir string) (learned, error) {
	var from int
	var tr record.Trace
	var armed []hooks.Hook
	var only []hooks.Matcher
	var onlyErr error
	var lives []running.Life
	e.onTheirOwn = map[string]bool{}
	lopts := opts
	lopts.Done = func(sc *language.Scenario) {
		st := stateKey.Of(sc)
		st.mu.Lock()
		from = st.from
		st.mu.Unlock()
		for _, a := range sc.Armed() {
			armed = append(armed, a.Hook)
		}
		tr = sc.Trace()
		lives = running.Lives(sc)
		for _, lf := range lives {
			e.onTheirOwn[lf.Actor] = true
		}
		// The resources a scenario knows include the services its
		// controllers call, which its Setup declares.
		only, onlyErr = matchOnly(sc, e.only)
		if e.learnDone != nil {
			e.learnDone(sc)
		}
	}
	res := language.RunScript(ctx, cp, lopts, dir, e.file, e.script(e.learningHeads(), false))
	pos := fmt.Sprintf("%s:%d", filepath.Base(e.file), e.at+1)
	if onlyErr != nil {
		return learned{}, &Refusal{Pos: pos, Msg: onlyErr.Error()}
	}
	if !res.Passed {
		return learned{}, fmt.Errorf("%w: the script up to the workload, and the workload alone, with no interferer, fail:\n%s", errLearning, res.Log)
	}
	if err := onlyMisses(tr, from, e, only); err != nil {
		return learned{}, &Refusal{Pos: pos, Msg: err.Error()}
	}
	l := moments(tr, from, armed, keepOnly(only), lives)
	l.trace, l.from, l.lives = tr, from, lives
	if len(l.all) == 0 {
		return learned{}, &Refusal{Pos: pos, Msg: fmt.Sprintf("the workload %q made no call: there is no moment to explore", e.workload)}
	}
	for _, r := range tr.Rows() {
		if r.Seq > from {
			l.rows = append(l.rows, r)
		}
	}
	return l, nil
}

// plan returns the exploration's runs, each the hooks it arms, in the order
// of the moments, then the interferers.
//
// At depth 1 a run hooks one interferer at one moment: each moment that is
// its own twin (moments), or, for a with every interferer, each moment:
// the rule that makes two moments one holds where the run has been the
// learning run so far, and an every hook fires again later. At depth 2 a
// run hooks two, the earlier moment first: every pair of them, over every
// moment, where two pairs are one when their first hooks are the same
// interferer at twin moments and their second hooks are the same; the
// second hook's moments all count, for the first hook has changed the run
// it fires in.
func (e *exploration) plan(l learned) ([][]Hook, error) {
	var singles []Hook
	for _, in := range e.interferers {
		seen := map[string]bool{}
		for i, m := range l.all {
			h := Hook{Moment: m, Interferer: in.cmd, Every: in.every, label: in.label}
			switch {
			// A racing moment is no moment of any hook's.
			case l.racing[i] != nil:
				continue
			// Every occurrence from the first on is every occurrence.
			case in.every && seen[h.Trigger()]:
				continue
			case !in.every && e.depth == 1 && l.twin[i] != i:
				continue
			}
			seen[h.Trigger()] = true
			singles = append(singles, h)
		}
	}
	sort.SliceStable(singles, func(i, j int) bool { return l.index(singles[i].Moment) < l.index(singles[j].Moment) })
	var runs [][]Hook
	if e.depth == 1 {
		for _, h := range singles {
			runs = append(runs, []Hook{h})
		}
		return runs, nil
	}
	if len(singles) < 2 {
		return nil, fmt.Errorf("%s:%d: depth %d needs at least %d moments and interferers, and the workload has %d", filepath.Base(e.file), e.at+1, e.depth, e.depth, len(singles))
	}
	first := func(h Hook) string {
		if h.Every {
			return h.Trigger() + " " + h.label
		}
		return l.all[l.twin[l.index(h.Moment)]].Trigger() + " " + h.label
	}
	seen := map[string]bool{}
	for i := range singles {
		for j := i + 1; j < len(singles); j++ {
			key := first(singles[i]) + " | " + singles[j].Trigger() + " " + singles[j].label
			if seen[key] {
				continue
			}
			seen[key] = true
			runs = append(runs, []Hook{singles[i], singles[j]})
		}
	}
	return runs, nil
}

// interfererFails reports an interferer whose action fails in every
// interleaving it ran in, for reasons of its own (a typo, a forbidden
// call): that is the scenario's mistake, said once, not a race found at
// every moment.
func interfererFails(e *exploration, rep *Report) error {
	for i, in := range e.interferers {
		var why string
		runs, own := 0, 0
		for _, il := range rep.Interleavings {
			if len(il.Hooks) != 1 || il.Hooks[0].label != in.label || il.Hooks[0].Every != in.every {
				continue
			}
			runs++
			for _, f := range il.Failures {
				if f.Tolerated {
					own++
					why, _, _ = strings.Cut(f.Message, "\n")
					break
				}
			}
		}
		if runs > 0 && own == runs {
			return fmt.Errorf("%s:%d: the interferer %q fails on its own in every interleaving, so explore found no race: %s",
				filepath.Base(e.file), e.withAt[i]+1, in.cmd, why)
		}
	}
	return nil
}

// runName names the run with hs armed, as its subtest: its moments, and
// each interferer's label when there are several.
func runName(hs []Hook, nameInterferer bool) string {
	var names []string
	for _, h := range hs {
		n := h.Moment.Name()
		if h.Every {
			n = strings.Trim(notName.ReplaceAllString(h.Trigger(), "_"), "_")
		}
		if nameInterferer {
			n += "_" + h.label
		}
		names = append(names, n)
	}
	return strings.Join(names, "+")
}

// headLines returns the 1-based lines of the first n heads in the scripts
// e.script writes: the hooks, whose own actions an interleaving tolerates.
func (e *exploration) headLines(n int) []int {
	slots := append([]int{e.at}, e.withAt...)
	var out []int
	for i := range n {
		if n+1 <= len(slots) {
			out = append(out, slots[i]+1)
		} else {
			out = append(out, e.at+1+i)
		}
	}
	return out
}

// interleave runs e with hs armed.
func interleave(ctx context.Context, cp *controlplane.ControlPlane, opts language.Options, e *exploration, dir string, hs []Hook, nameInterferer bool) Interleaving {
	il := Interleaving{Hooks: hs, Name: runName(hs, nameInterferer)}
	var heads []string
	for _, h := range hs {
		heads = append(heads, h.Line())
	}
	il.Script = e.script(heads, true)
	opts.Done = nil
	lines := e.headLines(len(heads))
	opts.Extensions = append(slices.Clip(opts.Extensions), interferers(lines))
	res := language.RunScript(ctx, cp, opts, dir, e.file, il.Script)
	il.Log, il.Trace, il.Failures = res.Log, res.Trace, res.Failures
	for _, x := range res.Trace.Own() {
		if record.IsConflict(x.Code, x.Reason) {
			il.Conflicts++
		}
	}
	judge(&il, res.Passed, lines, e.onTheirOwn)
	return il
}
