package auto

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/explore"
)

// TestConfirmerOrderGenerated holds the rule that lets a plan be judged
// while other runs still go: whatever order the plans and the twins end
// in, a plan is judged only once its group's twins have ended, so a
// difference one of them shows is set aside, and exactly the plans whose
// differences no twin of their group shows are run again. 2,000 seeded
// cases: up to 4 groups, each with none, one or two twins among the runs
// (none: its twin ran before, with the references), up to 8 plans, each
// with no difference, one its group's twins show, or one they do not,
// ending in a random order. Under --emit, each confirmed finding shrinks
// once its whole group is through, from the first finding of its group
// with its difference, in plan order, whatever order the runs ended in;
// a quarter of the findings are called flaky by their reruns.
func TestConfirmerOrderGenerated(t *testing.T) {
	ref := State{Read: true, Objects: map[string]map[string]string{"configmaps/a": {"data.shown": `"0"`, "data.own": `"0"`}}}
	changed := func(field string) State {
		st := State{Read: true, Objects: map[string]map[string]string{"configmaps/a": {"data.shown": `"0"`, "data.own": `"0"`}}}
		if field != "" {
			st.Objects["configmaps/a"][field] = `"1"`
		}
		return st
	}
	for seed := range uint64(2000) {
		r := rand.New(rand.NewPCG(seed, 32))
		groups := 1 + r.IntN(4)
		p := &planner{group: map[string]string{}, cut: map[string]bool{}}
		var todo, twins []explore.Plan
		var states []State
		findings, discarded := []int{}, 0
		twinsOf := make([]int, groups)
		for g := range groups {
			twinsOf[g] = r.IntN(3)
		}
		for i := range 1 + r.IntN(8) {
			g := r.IntN(groups)
			name := fmt.Sprintf("plan_%d", i)
			p.group[name] = fmt.Sprintf("g%d", g)
			todo = append(todo, explore.Plan{Name: name, Class: ClassIntermediate})
			switch r.IntN(3) {
			case 0:
				states = append(states, changed(""))
			case 1:
				states = append(states, changed("data.shown"))
				if twinsOf[g] > 0 {
					discarded++
				} else {
					findings = append(findings, i)
				}
			default:
				states = append(states, changed("data.own"))
				findings = append(findings, i)
			}
		}
		for g := range groups {
			for k := range twinsOf[g] {
				name := fmt.Sprintf("twin_%d_%d", g, k)
				p.group[name] = fmt.Sprintf("g%d", g)
				twins = append(twins, explore.Plan{Name: name, Class: ClassTwin})
				states = append(states, changed("data.shown"))
			}
		}
		all := append(slices.Clip(todo), twins...)
		c := &confirmer{p: p, todo: todo, all: all, states: states, ran: make([]explore.Interleaving, len(all)),
			o: newOracle([]State{ref}, nil), sum: &explore.AutoSummary{Plans: map[string]int{}},
			twinsDue: map[string]int{}, waiting: map[string][]int{}, left: map[string]int{}, xo: explore.Options{Shrink: true}}
		for i := range todo {
			c.left[p.group[todo[i].Name]]++
		}
		for i := len(todo); i < len(all); i++ {
			c.twinsDue[p.group[all[i].Name]]++
		}
		// A rerun calls a quarter of the findings flaky, as confirm does,
		// and lets the plan through.
		flaky := make([]bool, len(todo))
		for i := range flaky {
			flaky[i] = r.IntN(4) == 0
		}
		var mu sync.Mutex
		reran := []int{}
		shrunk := map[int]int{} // finding: the finding it started from, or -1
		c.rerun = func(i int) {
			mu.Lock()
			reran = append(reran, i)
			mu.Unlock()
			c.mu.Lock()
			defer c.mu.Unlock()
			c.ran[i].Flaky = flaky[i]
			c.through(i)
		}
		c.shrink = func(i, lead int) {
			g := p.group[todo[i].Name]
			assert.Equal(t, c.left[g], 0, "seed %d: plan %d shrinks before its group %s is through", seed, i, g)
			_, again := shrunk[i]
			assert.Assert(t, !again, "seed %d: plan %d shrinks twice", seed, i)
			shrunk[i] = lead
		}
		for _, i := range r.Perm(len(all)) {
			c.ended(i, explore.Interleaving{Name: all[i].Name, Class: all[i].Class, Passed: true})
		}
		c.follow.Wait()
		slices.Sort(reran)
		assert.Assert(t, slices.Equal(reran, findings), "seed %d: reran %v, want %v", seed, reran, findings)
		assert.Equal(t, c.sum.Discarded, discarded, "seed %d", seed)
		assert.Equal(t, c.sum.Plans[ClassIntermediate], len(todo), "seed %d: every plan judged once", seed)
		assert.Equal(t, len(c.waiting), 0, "seed %d: plans still wait for twins", seed)
		// Each twin is in the report, with its group and what it showed.
		assert.Equal(t, len(c.sum.Twins), len(twins), "seed %d: twins listed", seed)
		for _, tw := range c.sum.Twins {
			assert.Equal(t, tw.Group, p.group[tw.Name], "seed %d", seed)
			assert.Assert(t, tw.Read && len(tw.Differences) == 1 && tw.Differences[0].Field == "data.shown", "seed %d: %+v", seed, tw)
		}
		for i := range todo {
			assert.Equal(t, c.ran[i].Passed, !slices.Contains(findings, i), "seed %d, plan %d", seed, i)
		}
		// Each confirmed finding shrinks once, from the first confirmed
		// finding of its group before it in plan order with the same
		// difference, or on its own when it is that first; flaky ones
		// do not shrink.
		want := map[int]int{}
		for _, i := range findings {
			if flaky[i] {
				continue
			}
			want[i] = -1
			for _, k := range findings {
				if k < i && !flaky[k] && p.group[todo[k].Name] == p.group[todo[i].Name] && states[k].Objects["configmaps/a"]["data.own"] == states[i].Objects["configmaps/a"]["data.own"] {
					want[i] = k
					break
				}
			}
		}
		assert.DeepEqual(t, shrunk, want)
	}
}
