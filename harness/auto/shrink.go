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

// shrink returns p's regression scenario with the lines the bug does not
// need left out, and what it left out said in its header; the whole one,
// with why, when its first run does not fail at a claim or its twin does
// not pass.
func (s *shrinker) shrink(ctx context.Context, a *explore.Auto, rep *explore.Report, p explore.Plan, twin explore.Plan, hasTwin bool, il explore.Interleaving) []byte {
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
	target, why := s.holds(ctx, a, p, twin, claims, leftOut{}, "")
	if why != "" {
		return regression(a, rep, p, il, "Not shrunk: "+why+".")
	}
	setup := a.Setup()
	parts := workParts(a.Workload())
	if p.Workload != "" {
		parts = nil // a workload with waits cut: its twin runs another
	}
	var done leftOut
	for round := 0; round < 3; round++ {
		var cands []leftOut
		for _, l := range setup {
			if !slices.Contains(done.setup, l.N) {
				cands = append(cands, done.with(true, l.N))
			}
		}
		if len(parts)-len(done.work) > 1 {
			for i := range parts {
				if !slices.Contains(done.work, i) {
					cands = append(cands, done.with(false, i))
				}
			}
		}
		good := s.each(ctx, a, p, twin, claims, cands, target)
		if len(good) == 0 {
			break
		}
		if all := done.union(good); len(good) == 1 || s.ok(ctx, a, p, twin, claims, all, target) {
			done = all
			continue
		}
		// Each could go alone, not all at once: one at a time, in order.
		for _, g := range good {
			if next := done.union([]leftOut{g}); s.ok(ctx, a, p, twin, claims, next, target) {
				done = next
			}
		}
	}
	if len(done.setup)+len(done.work) == 0 {
		return regression(a, rep, p, il, fmt.Sprintf("Not shrunk: every line of the setup and the workload is needed for it to fail at %q while its neutral twin (%s) passes.", target, twin.Fault))
	}
	slices.Sort(done.work)
	var left []string
	for _, l := range setup {
		if slices.Contains(done.setup, l.N) {
			left = append(left, fmt.Sprintf("line %d, %s", l.N, l.Text))
		}
	}
	for _, i := range done.work {
		left = append(left, "the workload's "+strings.TrimSpace(parts[i]))
	}
	note := fmt.Sprintf("Shrunk: it still fails at %q, and its neutral twin (%s) passes,\nwithout %s.", target, twin.Fault, strings.Join(left, "; "))
	return regression(done.apply(a), rep, p, il, note)
}

// each returns those of cands that keep the scenario failing at target
// and its twin passing, trying them at once, as many as the shrinker's
// slots allow (two runs each).
func (s *shrinker) each(ctx context.Context, a *explore.Auto, p, twin explore.Plan, claims []string, cands []leftOut, target string) []leftOut {
	held := make([]bool, len(cands))
	var wg sync.WaitGroup
	for i, c := range cands {
		wg.Go(func() {
			held[i] = s.ok(ctx, a, p, twin, claims, c, target)
		})
	}
	wg.Wait()
	var out []leftOut
	for i, c := range cands {
		if held[i] {
			out = append(out, c)
		}
	}
	return out
}

// ok reports whether, with c left out, the scenario fails at target and
// its twin passes.
func (s *shrinker) ok(ctx context.Context, a *explore.Auto, p, twin explore.Plan, claims []string, c leftOut, target string) bool {
	_, why := s.holds(ctx, a, p, twin, claims, c, target)
	return why == ""
}

// holds runs the regression scenario of p with c left out, and its
// neutral twin with the same claims. It returns the command the scenario
// failed at first, and why it does not hold: the scenario passed, failed
// at another line than target (when target is set) or at no claim, or
// the twin failed. "" when it holds.
func (s *shrinker) holds(ctx context.Context, a *explore.Auto, p, twin explore.Plan, claims []string, c leftOut, target string) (string, string) {
	defer s.slots.Take(2)()
	small := c.apply(a)
	ph, pt := faultLines(p)
	th, tt := faultLines(twin)
	var plan, tw language.Result
	var wg sync.WaitGroup
	wg.Go(func() {
		plan = language.RunScript(ctx, s.cp, s.opts, s.next(), a.File(), small.WithWorkload(p.Workload).Script(ph, append(pt, claims...)))
	})
	wg.Go(func() {
		tw = language.RunScript(ctx, s.cp, s.opts, s.next(), a.File(), small.WithWorkload(twin.Workload).Script(th, append(tt, claims...)))
	})
	wg.Wait()
	if plan.Passed {
		return "", "the scenario passed"
	}
	first, line := "", 0
	for _, f := range plan.Failures {
		if !f.Tolerated && f.Kind != language.FailUnfired {
			first, line = f.Command, f.Line
			break
		}
	}
	// The lines after the workload's are the plan's tail and the claims:
	// a failure before them (the setup's, the workload's) is another one,
	// whatever its command.
	after := line > small.WithWorkload(p.Workload).WorkloadLine(len(ph))
	switch {
	case !after:
		return first, fmt.Sprintf("the scenario failed at %q, before its workload ended", first)
	case target == "" && !slices.Contains(s.targets, first):
		return first, fmt.Sprintf("the scenario failed at %q, which is none of its claims", first)
	case target != "" && first != target:
		return first, fmt.Sprintf("the scenario failed at %q, not %q", first, target)
	case !tw.Passed:
		return first, "its neutral twin failed: " + firstFailure(tw.Failures)
	}
	return first, ""
}

// next returns a folder of its own for the next run.
func (s *shrinker) next() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs++
	return filepath.Join(s.dir, strconv.Itoa(s.runs))
}
