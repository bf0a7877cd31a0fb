package auto

import (
	"context"
	"path/filepath"
	"strings"
	"sync"

	"github.com/racekit/racekit/harness/controlplane"
	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/language"
)

// confirmer judges each plan's run as soon as it and its group's neutral
// twins have ended, runs each finding again at once to confirm it, and
// shrinks each confirmed one (--emit), all in the slots the plans run in.
// So an exploration waits for its slowest chain of a plan, its rerun and
// its shrinking, not for the slowest plan, then the slowest rerun, then
// the slowest shrink: an operator that sleeps in its own poll in a few
// plans no longer makes every stage wait for it in turn. What is judged
// does not depend on the order runs end in: each plan is judged against
// the references and its own group's twins, known before it is judged.
type confirmer struct {
	ctx       context.Context
	cp        *controlplane.ControlPlane
	opts      language.Options
	a         *explore.Auto
	dir       string
	xo        explore.Options
	p         *planner
	base      []explore.Plan
	rep       *explore.Report
	todo, all []explore.Plan
	follow    sync.WaitGroup // the reruns and shrinks under way
	// rerun begins a finding's rerun (confirm; a test's recorder), and
	// shrink a confirmed finding's shrinking, from what the finding lead
	// left out unless lead is -1 (shrinkOne; a test's recorder).
	rerun  func(i int)
	shrink func(i, lead int)

	mu sync.Mutex
	o  *oracle
	// needs tells the candidates of every shrinking that cannot hold from
	// their lines alone; made at the first shrinking.
	needs  *needs
	sum    *explore.AutoSummary
	states []State
	ran    []explore.Interleaving
	// twinsDue counts, per group, its twins among all that have not
	// ended yet; waiting holds the plans of a group that ended before
	// its twins did.
	twinsDue map[string]int
	waiting  map[string][]int
	// reruns counts the confirming reruns begun, rerunsDone those ended
	// and rerunsFailed those explore failed; announced is set once their
	// stage is announced (after the plans'), from when their progress
	// is told.
	reruns, rerunsDone, rerunsFailed int
	announced                        bool
	shrinkers                        []*shrinker
	// left counts, per group, its plans not yet through (through);
	// siblings are the shrinkings begun, by plan.
	left     map[string]int
	siblings map[int]*sibling
}

// ended takes the run of all[i] (explore.Plan.Then): a twin's is noted
// for its group, and the plans of the group that waited for it judged;
// a plan's is judged, or waits for its group's twins.
func (c *confirmer) ended(i int, il explore.Interleaving) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ran[i] = il
	g := c.p.group[c.all[i].Name]
	if i >= len(c.todo) {
		c.sum.Twins = append(c.sum.Twins, c.o.twin(g, c.all[i], c.states[i], il))
		if c.twinsDue[g]--; c.twinsDue[g] == 0 {
			for _, k := range c.waiting[g] {
				c.judge(k)
			}
			delete(c.waiting, g)
		}
		return
	}
	if c.twinsDue[g] > 0 {
		c.waiting[g] = append(c.waiting[g], i)
		return
	}
	c.judge(i)
}

// judge judges plan i's run by the oracle, counts what it set aside, and
// begins the rerun of a finding. c.mu is held.
func (c *confirmer) judge(i int) {
	il := &c.ran[i]
	c.sum.Plans[il.Class]++
	if c.p.cut[c.todo[i].Name] {
		stalled(il, c.a.WorkloadLine(len(c.todo[i].Hooks)+len(c.todo[i].Heads)))
	}
	j := c.o.judge(il, c.states[i], c.p.group[c.todo[i].Name])
	c.sum.Discarded += j.discarded
	c.sum.Echoed += j.echoed
	c.sum.Unsettled += j.unsettled
	if !il.Passed && !il.NotApplicable {
		c.reruns++
		c.sum.Runs++
		c.follow.Go(func() { c.rerun(i) })
		return
	}
	c.through(i)
}

// confirm runs plan i once more: a finding that does not show again is
// flaky, not a bug; a confirmed one gets its regression scenario, and
// under --emit its shrinking begins.
func (c *confirmer) confirm(i int) {
	again := c.todo[i]
	var st State
	again.Done = func(sc *language.Scenario) { st = Observed(sc) }
	again.Then = nil
	rerun := c.a.Run(c.ctx, c.cp, c.opts, filepath.Join(c.dir, "confirm"), "", []explore.Plan{again}, c.xo)[0]
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rerunsDone++
	if !rerun.Passed && !rerun.NotApplicable {
		c.rerunsFailed++
	}
	if c.announced && c.xo.Progress != nil {
		c.xo.Progress(c.rerunsDone, c.reruns, c.rerunsFailed)
	}
	c.o.judge(&rerun, st, c.p.group[again.Name])
	c.o.confirm(&c.ran[i], rerun)
	if c.ran[i].Flaky {
		c.sum.Flaky++
	} else {
		c.ran[i].Emit = regression(c.a, c.rep, c.todo[i], c.ran[i], "")
	}
	c.through(i)
}

// through notes that plan i has been judged and, a finding, confirmed or
// called flaky. Under --emit, once every plan of its group is through,
// the group's confirmed findings begin their shrinking (c.shrink), in
// plan order: the first of those that differ from the references alike
// (the same claims) shrinks on its own, and each after it starts from
// what the first left out (shrinker.shrink). Waiting for the whole group
// makes which finding is first the plans' order, never the order their
// runs ended in, so the emitted scenarios are the same on every run.
// c.mu is held.
func (c *confirmer) through(i int) {
	g := c.p.group[c.todo[i].Name]
	if c.left[g]--; c.left[g] > 0 || !c.xo.Shrink {
		return
	}
	first := map[string]int{}
	for k := range c.todo {
		il := c.ran[k]
		if c.p.group[c.todo[k].Name] != g || il.Passed || il.NotApplicable || il.Flaky {
			continue
		}
		claims, _ := assertions(il.Differences)
		key := strings.Join(claims, "\n")
		lead, ok := first[key]
		if !ok {
			first[key], lead = k, -1
		}
		c.shrink(k, lead)
	}
}

// shrinkOne begins the shrinking of finding i, from what finding lead's
// left out when lead is not -1. c.mu is held.
func (c *confirmer) shrinkOne(i, lead int) {
	// A candidate that leaves out the cause of a wait fails as soon as
	// everything has settled without the awaited call, not at the wait's
	// bound (30 s); a wait that settling ends early only keeps a line.
	opts := c.opts
	opts.EndWaitsOnSettle = true
	if c.needs == nil {
		c.needs = newNeeds(c.a, c.cp.Mapper(), c.p.learned.Trace.Rows())
	}
	sh := &shrinker{cp: c.cp, opts: opts, dir: filepath.Join(c.dir, "shrink", c.todo[i].Name), slots: c.xo.Slots, needs: c.needs}
	c.shrinkers = append(c.shrinkers, sh)
	me := &sibling{name: c.todo[i].Name, done: make(chan struct{})}
	c.siblings[i] = me
	var from *sibling
	if lead >= 0 {
		from = c.siblings[lead]
	}
	found := c.ran[i]
	c.follow.Go(func() {
		defer close(me.done)
		twin, ok := c.p.twinOf(c.todo[i].Name, c.base)
		emit := sh.shrink(c.ctx, c.a, c.rep, c.todo[i], twin, ok, found, from, me)
		c.mu.Lock()
		defer c.mu.Unlock()
		c.ran[i].Emit = emit
	})
}

// wait waits, once the plans' runs have ended, for the reruns and shrinks
// they began; the reruns' stage is announced then, with those already
// done, as explore.Options.Stage and Progress tell a stage.
func (c *confirmer) wait() {
	c.mu.Lock()
	if c.reruns > 0 {
		if c.xo.Stage != nil {
			c.xo.Stage(StageConfirm, c.reruns)
		}
		c.announced = true
		if c.xo.Progress != nil && c.rerunsDone > 0 {
			c.xo.Progress(c.rerunsDone, c.reruns, c.rerunsFailed)
		}
	}
	c.mu.Unlock()
	c.follow.Wait()
	for _, sh := range c.shrinkers {
		c.sum.Shrunk += sh.runs
	}
}
