package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/racekit/racekit/harness/selfcheck"
)

// explore leaves moments out by rules (the equivalent moments, those
// racing with a controller that runs on its own, those only= does not
// keep), and a rule that leaves a moment out is a claim: the moment would
// have had the verdict of its twin, or it races. The catalogue cannot
// break such a claim where no scenario of it puts the case; a generator of
// small scenes can. Each scene is a txtar script, made from a seeded
// generator: watchers started or spawned, some halted before the explore
// line or inside the workload, watching the resource the workload writes
// or another; hooks armed before the explore line; several writers; some
// only= values, one of which may match no call. Each is explored with its
// moments left out and with every moment (ExploreOptions.Exhaustive), and
// the two must agree (CheckPruning), as must the scene's own model of what
// races and which moments only= keeps.

var (
	pruneCases = flag.Int("prune.cases", 12, "how many scenes TestExplorePruningGenerated generates and explores")
	pruneSeed  = flag.Uint64("prune.seed", 28, "the seed of the scenes TestExplorePruningGenerated generates")
)

// Where a scene's watcher is halted: before the explore line, never (the
// scenario's end halts it), or inside the workload, before write k (k ≥ 1).
const (
	haltBefore = -1
	haltNever  = 0
)

// sceneWatcher is a watcher a scene runs on its own.
type sceneWatcher struct {
	// name is what start or spawn runs it as (halt names it), actor the
	// actor its calls are recorded as; resource what it watches.
	name, actor, resource string
	// line starts it.
	line string
	halt int
}

// sceneWrite is one annotation a writer sets: annotate ACTOR OBJECT k=VALUE.
type sceneWrite struct{ actor, object, value string }

func (w sceneWrite) command() string { return "annotate " + w.actor + " " + w.object + " k=" + w.value }

// resource returns the resource of w's object.
func (w sceneWrite) resource() string { r, _, _ := strings.Cut(w.object, "/"); return r }

// sceneHook is a hook armed before the explore line, at the write of index
// at of the workload: its action is a write of carol's.
type sceneHook struct {
	point string
	at    int
	write sceneWrite
}

// scene is a generated explore scenario, and what it says of itself: the
// model the exploration must agree with.
type scene struct {
	n        int
	watchers []sceneWatcher
	writes   []sceneWrite
	hooks    []sceneHook
	// only are the explore line's only= values that match a call;
	// missing is one that matches none, or "".
	only    []string
	missing string
	// bob is the interferer.
	bob sceneWrite
}

// sceneObjects are the objects a scene creates and writes.
var sceneObjects = []string{"configmaps/a", "configmaps/b", "secrets/s"}

// genScene makes scene n from r.
func genScene(r *rand.Rand, n int) scene {
	s := scene{n: n}
	nWrites := 1 + r.IntN(3)
	writers := []string{"setup", "alice"}
	for i := range nWrites {
		// alice twice as often as setup: one writer's calls one after
		// another are where moments are equivalent.
		s.writes = append(s.writes, sceneWrite{actor: writers[min(r.IntN(3), 1)], object: sceneObjects[r.IntN(len(sceneObjects))], value: fmt.Sprintf("w%d", i+1)})
	}
	pool := []sceneWatcher{
		{name: "watcher", actor: "cmw", resource: "configmaps", line: "start watcher as cmw"},
		{name: "secrets", actor: "sw", resource: "secrets", line: "start secrets as sw"},
		{name: "pcm", actor: "pcm", resource: "configmaps", line: "spawn pcm RACEKIT_HARNESS_CHILD=watcher -- harness.test"},
		{name: "psec", actor: "psec", resource: "secrets", line: "spawn psec RACEKIT_HARNESS_CHILD=secrets -- harness.test"},
	}
	// Spawning a process costs more than starting a controller: at most
	// one of a scene's watchers is spawned.
	spawned := false
	for _, w := range pool {
		isSpawn := strings.HasPrefix(w.line, "spawn")
		if r.IntN(3) != 0 || isSpawn && spawned {
			continue
		}
		spawned = spawned || isSpawn
		switch k := r.IntN(4); {
		case k == 0:
			w.halt = haltBefore
		case k == 1 && nWrites > 1:
			w.halt = 1 + r.IntN(nWrites-1)
		default:
			w.halt = haltNever
		}
		s.watchers = append(s.watchers, w)
	}
	if r.IntN(2) == 0 {
		s.hooks = append(s.hooks, sceneHook{point: []string{"before", "after"}[r.IntN(2)], at: r.IntN(nWrites),
			write: sceneWrite{actor: "carol", object: sceneObjects[r.IntN(len(sceneObjects))], value: "c1"}})
	}
	written := s.allWrites()
	s.bob = sceneWrite{actor: "bob", object: written[r.IntN(len(written))].object, value: "bob"}
	switch r.IntN(3) {
	case 0:
		// Keep the calls on one resource or one object of a write.
		for range 1 + r.IntN(2) {
			w := written[r.IntN(len(written))]
			v := w.object
			if r.IntN(2) == 0 {
				v = w.resource()
			}
			// Two of one resource would hide whether an object's
			// only= keeps the object alone.
			if !slices.ContainsFunc(s.only, func(o string) bool { return strings.HasPrefix(o+"/", w.resource()+"/") }) {
				s.only = append(s.only, v)
			}
		}
		// An only= of a ConfigMap keeps that one alone: write the other
		// too, so that a rule that kept the resource shows.
		for _, v := range s.only {
			other := map[string]string{"configmaps/a": "configmaps/b", "configmaps/b": "configmaps/a"}[v]
			if other != "" && !slices.ContainsFunc(s.allWrites(), func(w sceneWrite) bool { return w.object == other }) {
				s.writes = append(s.writes, sceneWrite{actor: "alice", object: other, value: fmt.Sprintf("w%d", len(s.writes)+1)})
			}
		}
		if r.IntN(2) == 0 {
			s.missing = "configmaps/zz"
		}
	case 1:
		if r.IntN(3) == 0 {
			s.missing = "secrets/zz" // the only only=, which misses
		}
	}
	return s
}

// step is one call of the learning run, as the scene's model has it: a
// write, and the index of the workload's write it comes at.
type step struct {
	sceneWrite
	at int
}

// calls returns the learning run's calls in order: each write, with the
// hooks armed at it before and after it.
func (s scene) calls() []step {
	var out []step
	for i, w := range s.writes {
		for _, h := range s.hooks {
			if h.at == i && h.point == "before" {
				out = append(out, step{h.write, i})
			}
		}
		out = append(out, step{w, i})
		for _, h := range s.hooks {
			if h.at == i && h.point == "after" {
				out = append(out, step{h.write, i})
			}
		}
	}
	return out
}

// allWrites returns every write of the learning run, in order.
func (s scene) allWrites() []sceneWrite {
	var out []sceneWrite
	for _, c := range s.calls() {
		out = append(out, c.sceneWrite)
	}
	return out
}

// keeps reports whether only (none: every call) keeps the call w.
func keeps(only []string, w sceneWrite) bool {
	if len(only) == 0 {
		return true
	}
	return slices.Contains(only, w.object) || slices.Contains(only, w.resource())
}

// moments returns the moments the scene's workload has, in order, under
// only, as triggers: before and after each call only keeps.
func (s scene) moments(only []string) []string {
	occ := map[string]int{}
	var out []string
	for _, c := range s.calls() {
		key := c.actor + " patch " + c.object
		occ[key]++
		if !keeps(only, c.sceneWrite) {
			continue
		}
		m := key + " " + ordinal(occ[key])
		out = append(out, "before "+m, "after "+m)
	}
	return out
}

// racing returns, for each moment after a write that a watcher may see
// when it likes, the watchers' actors: those that watch the written
// resource, and run then (started before the explore line, and not halted
// before that write).
func (s scene) racing() map[string][]string {
	out := map[string][]string{}
	occ := map[string]int{}
	for _, c := range s.calls() {
		key := c.actor + " patch " + c.object
		occ[key]++
		for _, w := range s.watchers {
			if w.resource == c.resource() && w.halt != haltBefore && (w.halt == haltNever || w.halt > c.at) {
				m := "after " + key + " " + ordinal(occ[key])
				out[m] = append(out[m], w.actor)
			}
		}
	}
	return out
}

// ordinal is an occurrence as a trigger writes it.
func ordinal(n int) string {
	switch n {
	case 1:
		return "1st"
	case 2:
		return "2nd"
	case 3:
		return "3rd"
	}
	return fmt.Sprintf("%dth", n)
}

// script renders the scene as an explore scenario, with only as its only=
// values.
func (s scene) script(only []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Scene %d of TestExplorePruningGenerated (-prune.seed %d).\n\n# phase 1: the objects, the watchers, the armed hooks\n", s.n, *pruneSeed)
	for _, o := range sceneObjects {
		fmt.Fprintf(&b, "create %s.yaml\n", strings.ReplaceAll(o, "/", "-"))
	}
	for _, w := range s.watchers {
		fmt.Fprintf(&b, "%s\nawait %s watch %s 200\n", w.line, w.actor, w.resource)
	}
	for _, w := range s.watchers {
		if w.halt == haltBefore {
			fmt.Fprintf(&b, "halt %s\n", w.name)
		}
	}
	occ := map[string]int{}
	for i, w := range s.writes {
		key := w.actor + " patch " + w.object
		occ[key]++
		for _, h := range s.hooks {
			if h.at == i {
				fmt.Fprintf(&b, "on %s %s %s: %s\n", h.point, key, ordinal(occ[key]), h.write.command())
			}
		}
	}
	b.WriteString("\n# phase 2: the workload, explored with bob's write\nexplore ")
	for _, o := range only {
		b.WriteString("only=" + o + " ")
	}
	var parts []string
	for i, w := range s.writes {
		for _, h := range s.watchers {
			if h.halt > 0 && h.halt == i {
				parts = append(parts, "halt "+h.name)
			}
		}
		parts = append(parts, w.command())
	}
	if len(parts) > 1 {
		b.WriteString("do ")
	}
	b.WriteString(strings.Join(parts, " ; ") + "\n")
	fmt.Fprintf(&b, "with %s\n\n# phase 3: each object keeps the learning run's last write\n", s.bob.command())
	last := map[string]string{}
	for _, w := range s.allWrites() {
		last[w.object] = w.value
	}
	for _, o := range sceneObjects {
		if v, ok := last[o]; ok {
			fmt.Fprintf(&b, "annotation %s k=%s\n", o, v)
		}
	}
	for _, o := range sceneObjects {
		kind, name := "ConfigMap", strings.TrimPrefix(o, "configmaps/")
		if strings.HasPrefix(o, "secrets/") {
			kind, name = "Secret", strings.TrimPrefix(o, "secrets/")
		}
		fmt.Fprintf(&b, "-- %s.yaml --\napiVersion: v1\nkind: %s\nmetadata:\n  name: %s\n", strings.ReplaceAll(o, "/", "-"), kind, name)
	}
	return b.String()
}

// exploreLine returns the 1-based line of s's explore line.
func (s scene) exploreLine() int {
	for i, l := range strings.Split(s.script(nil), "\n") {
		if strings.HasPrefix(l, "explore ") {
			return i + 1
		}
	}
	return 0
}

// TestExplorePruningGenerated explores -prune.cases generated scenes
// (-prune.seed) with the moments left out and with every moment, and
// requires: the exhaustive exploration has exactly the moments of the
// calls the scene makes, under its only= values; every run of it has the
// verdict of its twin in the pruned one (CheckPruning); a moment left out
// as racing is one after a write of a resource a watcher watches while
// it runs, per the scene; with only=, each run has the verdict the same
// moment has without; and an only= that matches no call is refused,
// named.
func TestExplorePruningGenerated(t *testing.T) {
	cp := controlPlane(t)
	opts := ScriptOptions{Controllers: append(testControllers(), runningControllers()...)}
	r := rand.New(rand.NewPCG(*pruneSeed, 28))
	var st pruneStats
	ran := 0
	for n := range *pruneCases {
		s := genScene(r, n)
		t.Run(fmt.Sprintf("scene_%d", n), func(t *testing.T) {
			ran++
			checkScene(t, cp, opts, s, &st)
		})
	}
	if ran < *pruneCases {
		// -run or -skip left scenes out: what the rest exercise is no
		// measure of the generator.
		t.Skipf("-run or -skip left out %d of the %d scenes, whose counts this test judges", *pruneCases-ran, *pruneCases)
	}
	t.Logf("%d scenes: %d moments left out as equivalent, %d as racing; %d only= refused; %d runs, %d failed", *pruneCases, st.equivalent, st.racing, st.refused, st.runs, st.failed)
	// A generator that never makes a rule leave a moment out, or never
	// makes a run fail, checks nothing of it.
	if *pruneCases >= 10 && (st.equivalent == 0 || st.racing == 0 || st.refused == 0 || st.failed == 0) {
		t.Errorf("the scenes exercise too little: %+v", st)
	}
}

// pruneStats counts what the scenes of TestExplorePruningGenerated made
// the rules do.
type pruneStats struct {
	equivalent, racing, refused, runs, failed int
}

// checkScene explores s and checks what TestExplorePruningGenerated
// requires of it.
func checkScene(t *testing.T, cp *ControlPlane, opts ScriptOptions, s scene, st *pruneStats) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(sub string, only []string) string {
		p := filepath.Join(dir, sub, fmt.Sprintf("explore_scene_%d.txtar", s.n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s.script(only)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	withMissing := slices.Clone(s.only)
	if s.missing != "" {
		withMissing = append(withMissing, s.missing)
	}
	defer func() {
		if t.Failed() {
			t.Logf("the scene:\n%s", s.script(withMissing))
		}
	}()
	if s.missing != "" {
		_, err := Explore(ctx, cp, opts, write("missing", withMissing), ExploreOptions{Exhaustive: true})
		var refusal *ExploreRefusal
		if !errors.As(err, &refusal) || !strings.Contains(refusal.Msg, "only="+s.missing+" ") || refusal.Pos != fmt.Sprintf("explore_scene_%d.txtar:%d", s.n, s.exploreLine()) {
			t.Errorf("only=%s matches no call, and explore did not refuse it, naming it at the explore line: %v", s.missing, err)
		} else {
			st.refused++
		}
		if len(s.only) == 0 {
			return
		}
	}
	file := write("pruned", s.only)
	pruned, err := Explore(ctx, cp, opts, file, ExploreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := Explore(ctx, cp, opts, file, ExploreOptions{Exhaustive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("pruned:\n%s\nexhaustive:\n%s", pruned.Table(), whole.Table())
		}
	}()
	var got []string
	for _, m := range whole.Moments {
		got = append(got, m.Trigger())
	}
	if want := s.moments(s.only); !slices.Equal(got, want) {
		t.Errorf("the exhaustive exploration's moments:\n  got  %s\n  want %s", strings.Join(got, "; "), strings.Join(want, "; "))
	}
	st.equivalent += pruned.Equivalent
	st.racing += len(pruned.Racing)
	st.runs += len(pruned.Interleavings) + len(whole.Interleavings)
	st.failed += len(pruned.Failed()) + len(whole.Failed())
	c := CheckPruning(pruned, whole)
	for _, d := range c.Differences {
		t.Error(d)
	}
	races := s.racing()
	for _, rc := range pruned.Racing {
		m := rc.Moment.Trigger()
		var got []string
		for _, w := range rc.Watchers {
			got = append(got, w.Actor)
		}
		want, ok := races[m]
		if !ok {
			var at []string
			for k, v := range c.Racing {
				if strings.HasPrefix(k, m+" |") {
					at = append(at, v)
				}
			}
			t.Errorf("%s was left out as racing %s, and no watcher of its resource runs then (exhaustive: %s)", m, strings.Join(got, ", "), strings.Join(at, ", "))
			continue
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s was left out as racing %s; the watchers of its resource that run then are %s", m, strings.Join(got, ", "), strings.Join(want, ", "))
		}
	}
	if len(s.only) == 0 {
		return
	}
	// only= keeps the moments of the calls it names, each with the verdict
	// it has without only=.
	all, err := Explore(ctx, cp, opts, write("all", nil), ExploreOptions{Exhaustive: true})
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]string{}
	for _, il := range all.Interleavings {
		verdicts[selfcheck.RunKey(il.Hooks...)] = selfcheck.Verdict(il)
	}
	for _, il := range whole.Interleavings {
		if want, ok := verdicts[selfcheck.RunKey(il.Hooks...)]; !ok || want != selfcheck.Verdict(il) {
			t.Errorf("with only=%s, the run at %s: %s; without: %s", strings.Join(s.only, " only="), selfcheck.RunKey(il.Hooks...), selfcheck.Verdict(il), want)
		}
	}
}
