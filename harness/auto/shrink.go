package auto

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/racekit/racekit/harness/controlplane"
	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/language"
)

// twinOf returns the neutral twin of the plan called name: the one of
// base (the second reference run and the plain restarts' twins) or of
// the twins faults made that is in its group; ok is false when it has
// none.
func (p *planner) twinOf(name string, base []explore.Plan) (twin explore.Plan, ok bool) {
	g := p.group[name]
	for _, t := range append(slices.Clip(base), p.twins...) {
		if g != "" && t.Class == ClassTwin && p.group[t.Name] == g {
			return t, true
		}
	}
	return explore.Plan{}, false
}

// shrinker makes a confirmed finding's regression scenario smaller: it
// leaves out setup lines and workload commands while the scenario still
// fails at the claim it failed at whole, and its neutral twin, the same
// lines left out and the same claims made, still passes. So what is left
// is what the bug needs, and the claim is still the plan's fault's doing,
// not the smaller setup's: a setup line without which the references
// would not end as they did fails the twin, and one without which the
// fault cannot land (the operator's spawn, a hook that never fires)
// fails the scenario elsewhere.
type shrinker struct {
	cp   *controlplane.ControlPlane
	opts language.Options
	dir  string
	// slots are the exploration's: each pair of runs (a scenario and its
	// twin) takes two. The shrinkers of its findings share them with its
	// plans and reruns, so they shrink at once, beside the runs still
	// going, and all together run as many scenarios as explore's
	// parallel allows.
	slots *explore.Slots
	runs  int // how many scenarios it ran, for the names of their folders
	mu    sync.Mutex
	// targets are the lines a whole scenario may fail at: its claims, and
	// the commands the finding's failures failed at.
	targets []string
	// needs tells candidates that cannot hold without running them (nil:
	// every candidate runs).
	needs *needs
}

// cannot returns the line of a with c's lines left out, and the workload
// the plan p runs, that writes an object only a left-out create made
// (needs.missing), or "".
func (s *shrinker) cannot(a *explore.Auto, p explore.Plan, c leftOut) string {
	if s.needs == nil {
		return ""
	}
	var kept, gone []string
	for _, l := range a.Setup() {
		if slices.Contains(c.setup, l.N) {
			gone = append(gone, l.Text)
		} else {
			kept = append(kept, l.Text)
		}
	}
	if p.Workload != "" {
		kept = append(kept, workParts(p.Workload)...)
	} else {
		for i, part := range workParts(a.Workload()) {
			if slices.Contains(c.work, i) {
				gone = append(gone, strings.TrimSpace(part))
			} else {
				kept = append(kept, strings.TrimSpace(part))
			}
		}
	}
	return s.needs.missing(kept, gone)
}

// leftOut is a set of left-out lines: the setup's, by number (explore.Line's
// N), and the workload's commands, by index in a do line.
type leftOut struct {
	setup, work []int
}

// with returns c with one more line left out.
func (c leftOut) with(setup bool, n int) leftOut {
	out := leftOut{setup: slices.Clone(c.setup), work: slices.Clone(c.work)}
	if setup {
		out.setup = append(out.setup, n)
	} else {
		out.work = append(out.work, n)
	}
	return out
}

// union returns c with every line of others left out too.
func (c leftOut) union(others []leftOut) leftOut {
	out := c
	for _, o := range others {
		for _, n := range o.setup {
			if !slices.Contains(out.setup, n) {
				out = out.with(true, n)
			}
		}
		for _, n := range o.work {
			if !slices.Contains(out.work, n) {
				out = out.with(false, n)
			}
		}
	}
	return out
}

// workParts returns the commands of a do workload, without "do", or nil
// for any other workload (one command: nothing to leave out).
func workParts(workload string) []string {
	rest, ok := strings.CutPrefix(workload, "do ")
	if !ok {
		return nil
	}
	return strings.Split(rest, " ; ")
}

// apply returns a with c's lines left out.
func (c leftOut) apply(a *explore.Auto) *explore.Auto {
	a = a.Without(c.setup)
	parts := workParts(a.Workload())
	if len(c.work) == 0 || parts == nil {
		return a
	}
	var kept []string
	for i, p := range parts {
		if !slices.Contains(c.work, i) {
			kept = append(kept, p)
		}
	}
	return a.WithWorkload("do " + strings.Join(kept, " ; "))
}

// sibling is what one finding's shrinking left out, for the findings of
// its group that differ from the references as it does, after it in plan
// order (confirmer.through): done closes when its shrinking has ended;
// shrunk is set when it left out lines, left.
type sibling struct {
	name   string
	done   chan struct{}
	left   leftOut
	shrunk bool
}

// shrink returns p's regression scenario with the lines the bug does not
// need left out, and what it left out said in its header; the whole one,
// with why, when its first run does not fail at a claim or its twin does
// not pass. With from set, p's finding is a sibling's twice over (the
// same group, the same differences): p first tries what from left out,
// once from's shrinking has ended, and takes it when it holds, in one
// pair of runs instead of a shrinking of its own. me, if set, is told
// what p's shrinking left out.
func (s *shrinker) shrink(ctx context.Context, a *explore.Auto, rep *explore.Report, p explore.Plan, twin explore.Plan, hasTwin bool, il explore.Interleaving, from, me *sibling) []byte {
	if !hasTwin {
		return regression(a, rep, p, il, "Not shrunk: the plan has no neutral twin to hold the smaller scenarios to.")
	}
	claims, _ := assertions(il.Differences)
	// A finding whose difference is a failure (a wait after the workload
	// that ran out) fails at that line, with no claim of its own.
	s.targets = slices.Clone(claims)
	for _, d := range il.Differences {
		if d.Kind == "failure" {
			s.targets = append(s.targets, d.Object)
		}
	}
	if from != nil {
		select {
		case <-from.done:
		case <-ctx.Done():
		}
		if from.shrunk {
			if target, why, _ := s.holds(ctx, a, p, twin, claims, from.left, ""); why == "" {
				if me != nil {
					me.left, me.shrunk = from.left, true
				}
				return s.shrunk(a, rep, p, il, twin, from.left, target, "as "+from.name+" was, whose finding is the same")
			}
		}
	}
	target, why, _ := s.holds(ctx, a, p, twin, claims, leftOut{}, "")
	if why != "" {
		return regression(a, rep, p, il, "Not shrunk: "+why+".")
	}
	var lines []int
	for _, l := range a.Setup() {
		lines = append(lines, l.N)
	}
	parts := len(workParts(a.Workload()))
	if p.Workload != "" {
		parts = 0 // a workload with waits cut: its twin runs another
	}
	done := minimize(lines, parts, func(c leftOut) (held, broke bool) {
		if s.cannot(a, p, c) != "" {
			// It would fail at that line, before its claims, as a run
			// that breaks.
			return false, true
		}
		_, why, broke := s.holds(ctx, a, p, twin, claims, c, target)
		return why == "", broke
	})
	if len(done.setup)+len(done.work) == 0 {
		return regression(a, rep, p, il, fmt.Sprintf("Not shrunk: every line of the setup and the workload is needed for it to fail at %q while its neutral twin (%s) passes.", target, twin.Fault))
	}
	if me != nil {
		me.left, me.shrunk = done, true
	}
	return s.shrunk(a, rep, p, il, twin, done, target, "")
}

// shrunk returns p's regression scenario with done's lines left out, its
// header saying which, and how (as, when the lines are a sibling's).
func (s *shrinker) shrunk(a *explore.Auto, rep *explore.Report, p explore.Plan, il explore.Interleaving, twin explore.Plan, done leftOut, target, as string) []byte {
	setup := a.Setup()
	parts := workParts(a.Workload())
	work := slices.Sorted(slices.Values(done.work))
	var left []string
	for _, l := range setup {
		if slices.Contains(done.setup, l.N) {
			left = append(left, fmt.Sprintf("line %d, %s", l.N, l.Text))
		}
	}
	for _, i := range work {
		left = append(left, "the workload's "+strings.TrimSpace(parts[i]))
	}
	how := "Shrunk"
	if as != "" {
		how += " " + as
	}
	note := fmt.Sprintf("%s: it still fails at %q, and its neutral twin (%s) passes,\nwithout %s.", how, target, twin.Fault, strings.Join(left, "; "))
	return regression(done.apply(a), rep, p, il, note)
}

// minimize returns the lines to leave out of a scenario whose setup
// lines are setup (by number) and whose workload has parts commands: each
// line not yet out is left out, all at once in one round, beside those
// out already, and try says whether that holds (held), and, when not,
// whether the run broke: failed before its claims or at none of them (broke); the lines that could
// each go are then left out together, or one at a time when together
// they cannot, for up to three rounds. At least one workload command
// stays. Every set it returns, but the empty one, try held.
//
// A line whose leaving out broke the run is not tried again in a later
// round: it is a cause the rest of the scenario stands on (the create
// an await answers, the operator's start, the lock a restart needs
// free), and trying it again cost each round a wait's whole bound.
// Leaving out more lines could, in principle, let one go later; the
// scenario is then a line longer than it might be, never one that does
// not fail. TestMinimizeGenerated holds these rules.
func minimize(setup []int, parts int, try func(c leftOut) (held, broke bool)) leftOut {
	var done leftOut
	needed := map[line]bool{}
	for round := 0; round < 3; round++ {
		var cands []line
		for _, n := range setup {
			if c := (line{setup: true, n: n}); !slices.Contains(done.setup, n) && !needed[c] {
				cands = append(cands, c)
			}
		}
		if parts-len(done.work) > 1 {
			for i := range parts {
				if c := (line{n: i}); !slices.Contains(done.work, i) && !needed[c] {
					cands = append(cands, c)
				}
			}
		}
		held := make([]bool, len(cands))
		broke := make([]bool, len(cands))
		var wg sync.WaitGroup
		for i, c := range cands {
			wg.Go(func() { held[i], broke[i] = try(done.with(c.setup, c.n)) })
		}
		wg.Wait()
		var good []leftOut
		for i, c := range cands {
			switch {
			case held[i]:
				good = append(good, done.with(c.setup, c.n))
			case broke[i]:
				needed[c] = true
			}
		}
		if len(good) == 0 {
			break
		}
		// keeps reports whether c keeps a workload command: each could
		// go alone, but not every one.
		keeps := func(c leftOut) bool { return parts == 0 || len(c.work) < parts }
		all := done.union(good)
		if len(good) == 1 {
			done = all
			continue
		}
		if keeps(all) {
			if ok, _ := try(all); ok {
				done = all
				continue
			}
		}
		// Each could go alone, not all at once: one at a time, in order.
		for _, g := range good {
			next := done.union([]leftOut{g})
			if !keeps(next) {
				continue
			}
			if ok, _ := try(next); ok {
				done = next
			}
		}
	}
	return done
}

// line is a line a candidate leaves out: a setup line by number, or a
// workload command by index.
type line struct {
	setup bool
	n     int
}

// holds runs the regression scenario of p with c left out, and its
// neutral twin with the same claims. It returns the command the scenario
// failed at first, and why it does not hold: the scenario passed, failed
// at another line than target (when target is set) or at no claim, or
// the twin failed. "" when it holds. broke is set when the scenario
// failed before its claims or at none of them: in its setup or workload,
// at a line of the plan's tail, or at a wait EndWaitsOnSettle cut short.
//
// The two run at once, and the twin is stopped as soon as the scenario's
// run alone says it does not hold (pair): most candidates break, often in
// their first lines, and a twin run on to its end cost a whole run each.
func (s *shrinker) holds(ctx context.Context, a *explore.Auto, p, twin explore.Plan, claims []string, c leftOut, target string) (first, why string, broke bool) {
	defer s.slots.Take(2)()
	small := c.apply(a)
	ph, pt := faultLines(p)
	th, tt := faultLines(twin)
	workload := small.WithWorkload(p.Workload).WorkloadLine(len(ph))
	_, tw := pair(ctx, func(ctx context.Context) language.Result {
		return language.RunScript(ctx, s.cp, s.opts, s.next(), a.File(), small.WithWorkload(p.Workload).Script(ph, append(pt, claims...)))
	}, func(ctx context.Context) language.Result {
		return language.RunScript(ctx, s.cp, s.opts, s.next(), a.File(), small.WithWorkload(twin.Workload).Script(th, append(tt, claims...)))
	}, func(plan language.Result) bool {
		first, why, broke = s.judge(plan, workload, target)
		return why != ""
	})
	if why == "" && !tw.Passed {
		return first, "its neutral twin failed: " + firstFailure(tw.Failures), false
	}
	return first, why, broke
}

// judge judges the scenario's run alone (holds): the command it failed
// at first, and why it does not hold, or "" when only its twin's run can
// still say so. workload is the line of the scenario's workload: the
// lines after it are the plan's tail and the claims.
func (s *shrinker) judge(plan language.Result, workload int, target string) (first, why string, broke bool) {
	if plan.Passed {
		return "", "the scenario passed", false
	}
	line, settled := 0, false
	for _, f := range plan.Failures {
		if !f.Tolerated && f.Kind != language.FailUnfired {
			first, line, settled = f.Command, f.Line, f.Settled
			break
		}
	}
	switch {
	case settled:
		// The wait was cut short as everything settled (EndWaitsOnSettle):
		// whether it would have been met later is not known, so the
		// candidate does not hold, wherever the wait was.
		return first, fmt.Sprintf("the scenario's wait %q ended as everything had settled without what it waited for", first), true
	case line <= workload:
		// A failure before the tail and the claims (the setup's, the
		// workload's) is another one, whatever its command.
		return first, fmt.Sprintf("the scenario failed at %q, before its workload ended", first), true
	case !slices.Contains(s.targets, first):
		// A line of the plan's tail (an idle, a restart, an await) that
		// failed: what the fault needs to land or settle broke.
		return first, fmt.Sprintf("the scenario failed at %q, which is none of its claims", first), true
	case target != "" && first != target:
		return first, fmt.Sprintf("the scenario failed at %q, not %q", first, target), false
	}
	return first, "", false
}

// pair runs a scenario (run) and its twin at once, and returns their
// results. Once the scenario's run has ended and moot says its result
// alone decides (the twin's is not read), the twin's context is
// cancelled: a twin still running ends at its next wait or call, its
// processes halted as any scenario's are at its end. Otherwise the twin
// runs to its own end. moot is called once, before pair returns.
func pair(ctx context.Context, run, twin func(context.Context) language.Result, moot func(language.Result) bool) (plan, tw language.Result) {
	twinCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	wg.Go(func() { tw = twin(twinCtx) })
	plan = run(ctx)
	if moot(plan) {
		stop()
	}
	wg.Wait()
	return plan, tw
}

// next returns a folder of its own for the next run.
func (s *shrinker) next() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs++
	return filepath.Join(s.dir, strconv.Itoa(s.runs))
}
