package harness

import (
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"gotest.tools/v3/assert"
)

// TestMoments checks how the learning run's trace becomes moments: before
// each call and after each answer, the calls before the workload and the
// watches left out, occurrences counted per call, and after one call and
// before the next of the same actor taken as one moment unless another
// call came in between or the actor reads from a cache.
func TestMoments(t *testing.T) {
	get := func(seq int, actor, name string) Entry {
		return exchange(seq, actor, "get", "deployments", name, "", 200, "OK", "1")
	}
	update := func(seq int, actor, name string) Entry {
		return exchange(seq, actor, "update", "deployments", name, "1", 200, "OK", "2")
	}
	watch := func(seq int, actor string) Entry {
		return exchange(seq, actor, "watch", "deployments", "", "", 200, "OK", "")
	}
	tests := []struct {
		name       string
		trace      Trace
		from       int
		want       []string
		equivalent int
	}{{
		name:       "one actor: after a call is before the next",
		trace:      Trace{get(1, "setup", "web"), get(2, "controller", "web"), update(3, "controller", "web"), get(4, "controller", "web")},
		from:       1,
		want:       []string{"before controller get deployments/web 1st", "after controller get deployments/web 1st", "after controller update deployments/web 1st", "after controller get deployments/web 2nd"},
		equivalent: 2,
	}, {
		name:  "another actor's call in between keeps both",
		trace: Trace{get(1, "controller", "web"), get(2, "bob", "web"), update(3, "controller", "web")},
		want: []string{"before controller get deployments/web 1st", "after controller get deployments/web 1st",
			"before bob get deployments/web 1st", "after bob get deployments/web 1st",
			"before controller update deployments/web 1st", "after controller update deployments/web 1st"},
	}, {
		name:  "an actor that watches reads its cache in between",
		trace: Trace{watch(1, "controller"), update(2, "controller", "web"), update(3, "controller", "web")},
		want: []string{"before controller update deployments/web 1st", "after controller update deployments/web 1st",
			"before controller update deployments/web 2nd", "after controller update deployments/web 2nd"},
	}, {
		name:  "nothing after from",
		trace: Trace{get(1, "controller", "web")},
		from:  1,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms, eq := moments(tc.trace, tc.from)
			var got []string
			for _, m := range ms {
				got = append(got, m.Trigger())
			}
			assert.DeepEqual(t, got, tc.want)
			assert.Equal(t, eq, tc.equivalent)
		})
	}
}

// TestExploreScript checks the scripts an exploration derives: the explore
// line and the with lines become the hooks and the workload, the lines
// after keep their numbers, and the learning run comments the invariants
// out.
func TestExploreScript(t *testing.T) {
	e := &exploration{
		lines:    []string{"create a.yaml", "explore reconcile webapps/web", "with annotate bob deployments/web t=1", "with scale alice deployments/web 3", "field deployments/web spec.replicas 2", ""},
		at:       1,
		workload: "reconcile webapps/web",
		withAt:   []int{2, 3},
	}
	e.ar = txtar.Parse(nil)
	assert.Equal(t, string(e.script([]string{"on after controller get deployments/web 1st: annotate bob deployments/web t=1"}, true)),
		"create a.yaml\non after controller get deployments/web 1st: annotate bob deployments/web t=1\nreconcile webapps/web\n# with scale alice deployments/web 3\nfield deployments/web spec.replicas 2\n")
	assert.Equal(t, string(e.script([]string{"explore-from"}, false)),
		"create a.yaml\nexplore-from\nreconcile webapps/web\n# with scale alice deployments/web 3\n# field deployments/web spec.replicas 2\n")
	// Depth 2 with one with line: one line more, the numbers after shift.
	e.withAt = []int{1}
	e.lines = []string{"explore reconcile webapps/web", "with annotate bob deployments/web t=1", "field x"}
	e.at = 0
	assert.Equal(t, string(e.script([]string{"on A", "on B"}, true)), "on A\non B\nreconcile webapps/web\n# with annotate bob deployments/web t=1\nfield x\n")
}

// TestOnlyUnfired checks when a depth-2 interleaving does not apply: every
// failure it reports is a hook that never fired.
func TestOnlyUnfired(t *testing.T) {
	tests := []struct {
		name, log string
		want      bool
	}{
		{"a later moment never came", "> reconcile webapps/web\nFAIL: x.txtar:3: hook 2 (after controller get deployments/web 2nd: annotate bob deployments/web t=1) never fired: no matching call was made after it was armed\n", true},
		{"an invariant broke too", "FAIL: x.txtar:9: field deployments/web spec.replicas 2: got 1\nFAIL: x.txtar:3: hook 2 (...) never fired: no matching call\n", false},
		{"an invariant broke", "FAIL: x.txtar:9: field deployments/web spec.replicas 2: got 1\n", false},
		{"no failure", "PASS\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, onlyUnfired(tc.log), tc.want)
		})
	}
}

// TestMerge checks how shards' reports join: every run once, in order,
// into the whole's report; and what Merge refuses.
func TestMerge(t *testing.T) {
	ms := []Moment{{Point: "after", Actor: "controller", Verb: "get", Object: "webapps/web", Occ: 1}}
	il := func(i int) Interleaving {
		return Interleaving{Index: i, Name: "run" + string(rune('a'+i)), Passed: i != 1}
	}
	shard := func(name string, ils ...Interleaving) *ExploreReport {
		return &ExploreReport{File: "/a/x.txtar", Workload: "reconcile webapps/web", Depth: 1, Moments: ms, Total: 3, Shard: name, Interleavings: ils}
	}
	got, err := Merge(shard("2/2", il(2), il(0)), shard("1/2", il(1)))
	assert.NilError(t, err)
	whole := shard("", il(0), il(1), il(2))
	assert.DeepEqual(t, got, whole)
	assert.Equal(t, got.Table(), whole.Table())

	for _, tc := range []struct {
		name   string
		shards []*ExploreReport
		want   string
	}{
		{"a run twice", []*ExploreReport{shard("1/2", il(0), il(1)), shard("2/2", il(1), il(2))}, "merge: run runb is in shard 1/2 and in shard 2/2"},
		{"a run missing", []*ExploreReport{shard("1/2", il(0)), shard("2/2", il(2))}, "merge: the shards ran 2 of 3 runs; missing: 1"},
		{"another exploration", []*ExploreReport{shard("1/2", il(0)), {File: "y.txtar", Workload: "reconcile webapps/web", Depth: 1, Moments: ms, Total: 3, Shard: "2/2"}}, "merge: shard 2/2 explored y.txtar"},
		{"nothing", nil, "merge: no report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Merge(tc.shards...)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestInShard checks that the split is stable and covers every name once.
func TestInShard(t *testing.T) {
	names := []string{"before_controller_get_webapps_web_1st", "after_controller_get_webapps_web_1st", "after_controller_update_deployments_web_1st", "after_controller_get_deployments_web_1st"}
	for _, n := range names {
		in := 0
		for i := 1; i <= 3; i++ {
			if inShard(n, i, 3) {
				in++
			}
		}
		assert.Equal(t, in, 1, "%s is in %d shards", n, in)
	}
	assert.Equal(t, inShard(names[0], 2, 3), inShard(names[0], 2, 3))
}

// TestSplitPattern checks that a -run pattern splits into the levels of
// test names as package testing splits it, so that the element for an
// explore line's subtests is the one go test matches them with.
func TestSplitPattern(t *testing.T) {
	tests := []struct {
		pattern string
		want    []string
	}{
		{"TestScenarios", []string{"TestScenarios"}},
		{"TestScenarios/explore_flagship/after_controller_get_deployments_web_1st$", []string{"TestScenarios", "explore_flagship", "after_controller_get_deployments_web_1st$"}},
		{"TestScenarios/explore_(a|b/c)/x", []string{"TestScenarios", "explore_(a|b/c)", "x"}},
		{"Test/[/]/x", []string{"Test", "[/]", "x"}},
		{`Test/a\/b`, []string{"Test", `a\/b`}},
		{"Test//x", []string{"Test", "", "x"}},
	}
	for _, tc := range tests {
		t.Run(tc.pattern, func(t *testing.T) {
			assert.DeepEqual(t, splitPattern(tc.pattern), tc.want)
		})
	}
}
