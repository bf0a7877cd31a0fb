package explore

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/harness/running"
	"github.com/racekit/racekit/hooks"
)

// TestMoments checks how the learning run's trace becomes moments: before
// each call and after each answer, the calls before the workload and the
// watches left out, occurrences counted per call, and after one call and
// before the next of the same actor taken as one moment unless another
// call came in between, the actor reads from a cache, a hook fired in
// between, or a hook armed before the explore line could fire at either
// point.
func TestMoments(t *testing.T) {
	get := func(seq int, actor, name string) record.Entry {
		return exchange(seq, actor, "get", "deployments", name, "", 200, "OK", "1")
	}
	update := func(seq int, actor, name string) record.Entry {
		return exchange(seq, actor, "update", "deployments", name, "1", 200, "OK", "2")
	}
	watch := func(seq int, actor string) record.Entry {
		return exchange(seq, actor, "watch", "deployments", "", "", 200, "OK", "")
	}
	fired := record.Entry{Hook: &record.HookFiring{ID: 1, Trigger: "after controller get deployments/web 1st", Action: "set d spec.x 1"}}
	hookOn := func(point hooks.Point, verb, name string) hooks.Hook {
		return hooks.Hook{Point: point, Match: hooks.Matcher{Actor: "controller", Verb: verb, Resource: "deployments", Name: name}, Occurrence: 2}
	}
	hook := func(point hooks.Point, verb string) hooks.Hook { return hookOn(point, verb, "web") }
	// runs is the mover, as the controller, begun after seq from and
	// running still.
	runs := func(from int) []running.Life {
		return []running.Life{{Name: "mover", Actor: "controller", From: from}}
	}
	// clusterWide is x of every namespace (a cluster-scoped call's form).
	clusterWide := func(e record.Entry) record.Entry {
		e.Exchange.Call.Namespace = ""
		return e
	}
	oneActor := record.Trace{get(1, "setup", "web"), get(2, "controller", "web"), update(3, "controller", "web"), get(4, "controller", "web")}
	all := []string{"before controller get deployments/web 1st", "after controller get deployments/web 1st",
		"before controller update deployments/web 1st", "after controller update deployments/web 1st",
		"before controller get deployments/web 2nd", "after controller get deployments/web 2nd"}
	tests := []struct {
		name  string
		trace record.Trace
		from  int
		armed []hooks.Hook
		// only are the explore line's only= matchers; lives the lives
		// of what ran on its own.
		only  []hooks.Matcher
		lives []running.Life
		want  []string
		// left are the moments left out, each "MOMENT = TWIN"; racing
		// those left out as racing with an actor on its own.
		left, racing []string
	}{{
		name:  "one actor: after a call is before the next",
		trace: oneActor,
		from:  1,
		want:  []string{all[0], all[1], all[3], all[5]},
		left:  []string{all[2] + " = " + all[1], all[4] + " = " + all[3]},
	}, {
		name:  "another actor's call in between keeps both",
		trace: record.Trace{get(1, "controller", "web"), get(2, "bob", "web"), update(3, "controller", "web")},
		want: []string{"before controller get deployments/web 1st", "after controller get deployments/web 1st",
			"before bob get deployments/web 1st", "after bob get deployments/web 1st",
			"before controller update deployments/web 1st", "after controller update deployments/web 1st"},
	}, {
		name:  "an actor that watches reads its cache in between",
		trace: record.Trace{watch(1, "controller"), update(2, "controller", "web"), update(3, "controller", "web")},
		want: []string{"before controller update deployments/web 1st", "after controller update deployments/web 1st",
			"before controller update deployments/web 2nd", "after controller update deployments/web 2nd"},
	}, {
		name:  "a hook that fired in between keeps both",
		trace: record.Trace{get(1, "setup", "web"), get(2, "controller", "web"), fired, update(3, "controller", "web"), get(4, "controller", "web")},
		from:  1,
		want:  []string{all[0], all[1], all[2], all[3], all[5]},
		left:  []string{all[4] + " = " + all[3]},
	}, {
		// An armed hook of another occurrence could fire there in a run
		// an interferer changed: the rule ignores occurrences.
		name:  "a hook armed at before the next call keeps both",
		trace: oneActor,
		from:  1,
		armed: []hooks.Hook{hook(hooks.Before, "update")},
		want:  []string{all[0], all[1], all[2], all[3], all[5]},
		left:  []string{all[4] + " = " + all[3]},
	}, {
		name:  "a hook armed at after the call keeps both",
		trace: oneActor,
		from:  1,
		armed: []hooks.Hook{hook(hooks.After, "update")},
		want:  []string{all[0], all[1], all[3], all[4], all[5]},
		left:  []string{all[2] + " = " + all[1]},
	}, {
		name:  "a hook armed elsewhere changes nothing",
		trace: oneActor[:3],
		from:  1,
		armed: []hooks.Hook{hookOn(hooks.Before, "update", "db"), hookOn(hooks.After, "get", "db"), hook(hooks.Before, "patch"), hook(hooks.Before, "get")},
		want:  []string{all[0], all[1], all[3]},
		left:  []string{all[2] + " = " + all[1]},
	}, {
		name:  "nothing after from",
		trace: record.Trace{get(1, "controller", "web")},
		from:  1,
	}, {
		// A call only= leaves out is no moment, but it comes between
		// the two calls around it.
		name:  "only one object",
		trace: record.Trace{get(1, "controller", "web"), get(2, "controller", "db"), update(3, "controller", "web"), get(4, "controller", "web")},
		only:  []hooks.Matcher{{Resource: "deployments", Name: "web"}},
		want: []string{"before controller get deployments/web 1st", "after controller get deployments/web 1st",
			"before controller update deployments/web 1st", "after controller update deployments/web 1st", "after controller get deployments/web 2nd"},
		left: []string{"before controller get deployments/web 2nd = after controller update deployments/web 1st"},
	}, {
		name:  "only a resource",
		trace: record.Trace{get(1, "controller", "web"), exchange(2, "controller", "update", "webapps", "web", "1", 200, "OK", "2"), exchange(3, "controller", "update", "deployments", "web", "1", 200, "OK", "2")},
		only:  []hooks.Matcher{{Resource: "deployments"}},
		want: []string{"before controller get deployments/web 1st", "after controller get deployments/web 1st",
			"before controller update deployments/web 1st", "after controller update deployments/web 1st"},
	}, {
		// As in a trigger, deployments/web is the object, not its
		// status: only=deployments/web/status keeps that.
		name:  "only an object, not its subresource",
		trace: record.Trace{get(1, "controller", "web"), status(2, "controller", "web"), update(3, "controller", "web")},
		only:  []hooks.Matcher{{Resource: "deployments", Name: "web"}},
		want: []string{"before controller get deployments/web 1st", "after controller get deployments/web 1st",
			"before controller update deployments/web 1st", "after controller update deployments/web 1st"},
	}, {
		name:  "only a subresource",
		trace: record.Trace{get(1, "controller", "web"), status(2, "controller", "web"), update(3, "controller", "web")},
		only:  []hooks.Matcher{{Resource: "deployments", Name: "web", Subresource: "status"}},
		want:  []string{"before controller update deployments/web/status 1st", "after controller update deployments/web/status 1st"},
	}, {
		// only=controller:deployments keeps the controller's calls, not
		// kcm's reads of the same object, which are no moment but come
		// between the controller's.
		name:  "only one actor's",
		trace: record.Trace{get(1, "controller", "web"), get(2, "kcm", "web"), update(3, "controller", "web")},
		only:  []hooks.Matcher{{Actor: "controller", Resource: "deployments"}},
		want: []string{"before controller get deployments/web 1st", "after controller get deployments/web 1st",
			"before controller update deployments/web 1st", "after controller update deployments/web 1st"},
	}, {
		name:  "only what no call is on",
		trace: oneActor,
		only:  []hooks.Matcher{{Resource: "configmaps"}},
	}, {
		// The controller's watch brings it bob's update whenever the
		// API server has made it: a hook after it races with what the
		// controller does about it. Its own calls, and bob's read, do
		// not race.
		name:  "after another's write, a watcher on its own races",
		trace: record.Trace{watch(1, "controller"), get(2, "bob", "web"), update(3, "bob", "web"), get(4, "controller", "web"), update(5, "controller", "web")},
		lives: runs(0),
		want: []string{"before bob get deployments/web 1st", "after bob get deployments/web 1st",
			"before controller get deployments/web 1st", "after controller get deployments/web 1st", "before controller update deployments/web 1st", "after controller update deployments/web 1st"},
		left:   []string{"before bob update deployments/web 1st = after bob get deployments/web 1st"},
		racing: []string{"after bob update deployments/web 1st: mover (as controller), which watches deployments"},
	}, {
		name:  "an actor on its own that does not watch does not race",
		trace: record.Trace{update(1, "bob", "web"), get(2, "controller", "web")},
		lives: runs(0),
		want:  []string{"before bob update deployments/web 1st", "after bob update deployments/web 1st", "before controller get deployments/web 1st", "after controller get deployments/web 1st"},
	}, {
		// Issue 28: a watcher halted before the write sees nothing of it.
		name:  "a watcher gone before the write does not race",
		trace: record.Trace{watch(1, "controller"), update(2, "bob", "web")},
		from:  1,
		lives: []running.Life{{Name: "mover", Actor: "controller", From: 0, To: 1, Gone: true}},
		want:  []string{"before bob update deployments/web 1st", "after bob update deployments/web 1st"},
	}, {
		// Issue 28: a watcher of Secrets sees no write of a Deployment.
		name:  "a watcher of another resource does not race",
		trace: record.Trace{exchange(1, "controller", "watch", "secrets", "", "", 200, "OK", ""), update(2, "bob", "web")},
		from:  1,
		lives: runs(0),
		want:  []string{"before bob update deployments/web 1st", "after bob update deployments/web 1st"},
	}, {
		name:  "a watcher of another object does not race",
		trace: record.Trace{exchange(1, "controller", "watch", "deployments", "db", "", 200, "OK", ""), update(2, "bob", "web")},
		from:  1,
		lives: runs(0),
		want:  []string{"before bob update deployments/web 1st", "after bob update deployments/web 1st"},
	}, {
		name:   "a watcher of the object races",
		trace:  record.Trace{exchange(1, "controller", "watch", "deployments", "web", "", 200, "OK", ""), update(2, "bob", "web")},
		from:   1,
		lives:  runs(0),
		want:   []string{"before bob update deployments/web 1st"},
		racing: []string{"after bob update deployments/web 1st: mover (as controller), which watches deployments/web"},
	}, {
		name:   "a watcher of every namespace, kept to the scenario's, races",
		trace:  record.Trace{clusterWide(exchange(1, "controller", "watch", "deployments", "", "", 200, "OK", "")), update(2, "bob", "web")},
		from:   1,
		lives:  runs(0),
		want:   []string{"before bob update deployments/web 1st"},
		racing: []string{"after bob update deployments/web 1st: mover (as controller), which watches deployments"},
	}, {
		name:  "a watch the API server refused sees nothing",
		trace: record.Trace{exchange(1, "controller", "watch", "deployments", "", "", 403, "Forbidden", ""), update(2, "bob", "web")},
		from:  1,
		lives: runs(0),
		want:  []string{"before bob update deployments/web 1st", "after bob update deployments/web 1st"},
	}, {
		// Its informer lists after the write, and sees it there.
		name:   "a watcher that runs, and watches after the write, races",
		trace:  record.Trace{update(1, "bob", "web"), watch(2, "controller")},
		lives:  runs(0),
		want:   []string{"before bob update deployments/web 1st"},
		racing: []string{"after bob update deployments/web 1st: mover (as controller), which watches deployments"},
	}, {
		name:  "a watcher started after the write does not race",
		trace: record.Trace{update(1, "bob", "web"), watch(2, "controller")},
		lives: runs(1),
		want:  []string{"before bob update deployments/web 1st", "after bob update deployments/web 1st"},
	}, {
		// Halted, then started again: the first life's watch does not
		// make the second a watcher before it watches, nor the reverse.
		name:  "a watcher races in the life it watches in",
		trace: record.Trace{watch(1, "controller"), update(2, "bob", "web"), update(3, "bob", "db"), get(4, "controller", "web"), update(5, "bob", "web")},
		from:  1,
		lives: []running.Life{{Name: "mover", Actor: "controller", From: 0, To: 2, Gone: true}, {Name: "mover", Actor: "controller", From: 3}},
		want: []string{"before bob update deployments/web 1st", "before bob update deployments/db 1st", "after bob update deployments/db 1st",
			"before controller get deployments/web 1st", "after controller get deployments/web 1st", "before bob update deployments/web 2nd", "after bob update deployments/web 2nd"},
		racing: []string{"after bob update deployments/web 1st: mover (as controller), which watches deployments"},
	}, {
		// A halt in a do, between bob's two calls: at after the first,
		// an interferer meets a watcher that runs; at before the
		// second, none.
		name:  "a life that ends between two calls keeps both",
		trace: record.Trace{get(1, "setup", "web"), get(2, "bob", "web"), update(3, "bob", "web")},
		from:  1,
		lives: []running.Life{{Name: "mover", Actor: "controller", From: 0, To: 2, Gone: true}},
		want:  []string{"before bob get deployments/web 1st", "after bob get deployments/web 1st", "before bob update deployments/web 1st", "after bob update deployments/web 1st"},
	}, {
		name:  "a life that begins between two calls keeps both",
		trace: record.Trace{get(1, "setup", "web"), get(2, "bob", "web"), update(3, "bob", "web")},
		from:  1,
		lives: runs(2),
		want:  []string{"before bob get deployments/web 1st", "after bob get deployments/web 1st", "before bob update deployments/web 1st", "after bob update deployments/web 1st"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := moments(tc.trace, tc.from, tc.armed, keepOnly(tc.only), tc.lives)
			kept, eq, races := l.kept()
			var got, left, racing []string
			for _, rc := range races {
				var ws []string
				for _, w := range rc.Watchers {
					ws = append(ws, w.String())
				}
				racing = append(racing, rc.Moment.Trigger()+": "+strings.Join(ws, "; "))
			}
			assert.DeepEqual(t, racing, tc.racing)
			for _, m := range kept {
				got = append(got, m.Trigger())
			}
			for _, e := range eq {
				left = append(left, e.Moment.Trigger()+" = "+e.Twin.Trigger())
			}
			assert.DeepEqual(t, got, tc.want)
			assert.DeepEqual(t, left, tc.left)
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

// TestAutoPrelude checks where an explore auto's prelude goes: after the
// setup and before the plan's hooks and heads, in the learning run before
// the line that counts the workload's calls, and that WorkloadLine counts
// it, so that the hooks' lines the judge looks for are the lines they are.
func TestAutoPrelude(t *testing.T) {
	e := &exploration{
		lines:    []string{"spawn op -- op", "explore auto do delete alice rabbitmqclusters/r", ""},
		at:       1,
		workload: "do delete alice rabbitmqclusters/r",
		auto:     true,
	}
	e.ar = txtar.Parse(nil)
	a := &Auto{e: e}
	a.Prelude([]string{"idle op"})
	got := string(a.Script([]string{"on before op update rabbitmqclusters/r 1st: mark m"}, []string{"idle op"}))
	want := "spawn op -- op\n# explore auto: do delete alice rabbitmqclusters/r\nidle op\non before op update rabbitmqclusters/r 1st: mark m\ndo delete alice rabbitmqclusters/r\nidle op\n"
	assert.Equal(t, got, want)
	lines := strings.Split(got, "\n")
	assert.Equal(t, lines[a.WorkloadLine(0)-1], "on before op update rabbitmqclusters/r 1st: mark m", "WorkloadLine(0) is the first hook's line")
	assert.Equal(t, lines[a.WorkloadLine(1)-1], "do delete alice rabbitmqclusters/r", "WorkloadLine(1) is the workload's line")
	assert.Equal(t, string(e.script(e.learningHeads(), false)),
		"spawn op -- op\nidle op\nexplore-from\ndo delete alice rabbitmqclusters/r\n")
}

// TestJudge checks how a run's failures make its outcome: a failure of
// anything but the interferers' own hooks is a finding; a depth-2 hook
// whose moment never came, or an interferer whose own action failed, with
// nothing else failing, is n/a.
func TestJudge(t *testing.T) {
	field := language.Failure{Kind: language.FailCommand, File: "x.txtar", Line: 9, Command: "field deployments/web spec.replicas 2", Message: "got 1\nthe trace's tail", Rules: []string{"the update sent no resourceVersion (blind update)"}}
	hookAt := func(line int) *language.FailedHook {
		return &language.FailedHook{ID: 1, Trigger: "after controller get deployments/web 1st", Armed: "x.txtar:" + strconv.Itoa(line)}
	}
	never := language.Failure{Kind: language.FailUnfired, Command: "annotate bob deployments/web t=1", Message: "no matching call was made after it was armed", Hook: hookAt(4)}
	own := language.Failure{Kind: language.FailHookAction, File: "x.txtar", Line: 5, Command: "scale alice deployments/web 3", Message: `deployments.apps "web" not found`, Hook: hookAt(3), Tolerated: true}
	setup := language.Failure{Kind: language.FailHookAction, File: "x.txtar", Line: 5, Command: "set d spec.x 1", Message: "no snapshot d", Hook: hookAt(1)}
	one, two := []Hook{{}}, []Hook{{}, {}}
	running := []Hook{{Moment: Moment{Actor: "kcm"}}}
	tests := []struct {
		name    string
		hooks   []Hook
		passed  bool
		fs      []language.Failure
		outcome string
	}{
		{"a pass", one, true, nil, "pass"},
		{"an invariant broke", one, false, []language.Failure{field}, "FAIL x.txtar:9: field deployments/web spec.replicas 2: got 1\nrule broken: the update sent no resourceVersion (blind update)"},
		{"a later moment never came", two, false, []language.Failure{never}, "n/a (a later moment never came)"},
		{"a moment never came, at depth 1", one, false, []language.Failure{never}, "FAIL x.txtar:4: hook 1 (after controller get deployments/web 1st: annotate bob deployments/web t=1) never fired: no matching call was made after it was armed"},
		{"a moment of an actor on its own never came", running, false, []language.Failure{never}, "n/a (the moment never came: kcm runs on its own, and made no such call in this run)"},
		{"a moment of an actor on its own never came, and an invariant broke", running, false, []language.Failure{never, field}, "FAIL x.txtar:9: field deployments/web spec.replicas 2: got 1\nrule broken: the update sent no resourceVersion (blind update)"},
		{"an invariant broke, and a later moment never came", two, false, []language.Failure{field, never}, "FAIL x.txtar:9: field deployments/web spec.replicas 2: got 1\nrule broken: the update sent no resourceVersion (blind update)"},
		{"the interferer failed", one, true, []language.Failure{own}, `n/a (interferer failed: deployments.apps "web" not found)`},
		{"the interferer failed, and an invariant", one, false, []language.Failure{own, field}, "FAIL x.txtar:9: field deployments/web spec.replicas 2: got 1\nrule broken: the update sent no resourceVersion (blind update)"},
		{"a hook the script armed failed", one, false, []language.Failure{setup}, "FAIL x.txtar:5: hook 1 (after controller get deployments/web 1st), armed at x.txtar:1, failed: no snapshot d"},
		{"a failure racekit did not see", one, false, nil, "FAIL the run failed outside racekit's commands (a testscript command of its own?): see its log"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			il := Interleaving{Hooks: tc.hooks, Failures: tc.fs}
			judge(&il, tc.passed, []int{3, 4}, map[string]bool{"kcm": true})
			var got string
			switch {
			case il.Passed:
				got = "pass"
			case il.NotApplicable:
				got = "n/a (" + il.NotApplicableWhy + ")"
			default:
				got = "FAIL " + il.Failure
			}
			assert.Equal(t, got, tc.outcome)
			assert.Assert(t, !(il.Passed && il.NotApplicable))
		})
	}
}

// TestMerge checks how shards' reports join: every run once, in order,
// into the whole's report; and what Merge refuses: overlaps, gaps, and
// reports of another exploration, whatever tells them apart.
func TestMerge(t *testing.T) {
	ms := []Moment{{Point: "after", Actor: "controller", Verb: "get", Object: "webapps/web", Occ: 1}}
	il := func(i int) Interleaving {
		return Interleaving{Index: i, Name: "run" + string(rune('a'+i)), Passed: i != 1}
	}
	shard := func(name string, ils ...Interleaving) *Report {
		return &Report{File: "/a/x.txtar", Script: "abc", Workload: "reconcile webapps/web", Interferers: []string{"annotate bob deployments/web t=1"},
			Invariants: []string{"annotation deployments/web t=1"}, Depth: 1, Moments: ms, Total: 3, Shard: name, Interleavings: ils}
	}
	got, err := Merge(shard("2/2", il(2), il(0)), shard("1/2", il(1)))
	assert.NilError(t, err)
	whole := shard("", il(0), il(1), il(2))
	assert.DeepEqual(t, got, whole)
	assert.Equal(t, got.Table(), whole.Table())

	other := func(change func(*Report)) *Report {
		r := shard("2/2")
		change(r)
		return r
	}
	for _, tc := range []struct {
		name   string
		shards []*Report
		want   string
	}{
		{"a run twice", []*Report{shard("1/2", il(0), il(1)), shard("2/2", il(1), il(2))}, "merge: run runb is in shard 1/2 and in shard 2/2"},
		{"a run missing", []*Report{shard("1/2", il(0)), shard("2/2", il(2))}, "merge: the shards ran 2 of 3 runs; missing: 1"},
		{"another file", []*Report{shard("1/2", il(0)), other(func(r *Report) { r.File = "y.txtar" })}, "merge: shard 2/2 is of another exploration than shard 1/2:\n  file: y.txtar, not x.txtar"},
		// Two scripts called m.txtar, in two folders.
		{"another script of the same name", []*Report{shard("1/2", il(0)), other(func(r *Report) { r.File, r.Script = "/b/x.txtar", "def" })}, "script (SHA-256): def, not abc"},
		{"other interferers", []*Report{shard("1/2", il(0)), other(func(r *Report) { r.Interferers = []string{"scale alice deployments/web 3"} })}, "interferers: scale alice deployments/web 3, not annotate bob deployments/web t=1"},
		{"other invariants", []*Report{shard("1/2", il(0)), other(func(r *Report) { r.Invariants = nil })}, "invariants: , not annotation deployments/web t=1"},
		{"another depth", []*Report{shard("1/2", il(0)), other(func(r *Report) { r.Depth = 2 })}, "depth: 2, not 1"},
		{"only some calls", []*Report{shard("1/2", il(0)), other(func(r *Report) { r.Only = []string{"configmaps"} })}, "only: configmaps, not every call"},
		{"racing moments", []*Report{shard("1/2", il(0)), other(func(r *Report) {
			r.Racing = []Race{{Moment: ms[0], Watchers: []Watcher{{Name: "mover", Actor: "mover", Watch: "webapps"}}}}
		})}, "racing moments: after controller get webapps/web 1st (left out: races mover, which watches webapps), not none"},
		{"another variant", []*Report{shard("1/2", il(0)), other(func(r *Report) { r.Variant = "blind-update" })}, "teaching variant: blind-update, not none (the production controller)"},
		{"without pruning", []*Report{shard("1/2", il(0)), other(func(r *Report) { r.Exhaustive = true })}, "pruning: every moment (exhaustive), not equivalent moments left out"},
		{"other moments", []*Report{shard("1/2", il(0)), other(func(r *Report) { r.Moments = nil })}, "moments: , not after controller get webapps/web 1st"},
		{"no identity", []*Report{shard("1/2", il(0)), other(func(r *Report) { r.Script = "" })}, "merge: shard 2/2 names no script"},
		{"no identity first", []*Report{other(func(r *Report) { r.Script = "" }), shard("1/2", il(0))}, "merge: shard 2/2 names no script"},
		{"nothing", nil, "merge: no report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Merge(tc.shards...)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestRunNames checks that every run has a name of its own: two
// interferers whose first words coincide are told apart by more of their
// words, two alike by a number, and the names stay the first two words
// where those differ.
func TestRunNames(t *testing.T) {
	m := Moment{Point: "after", Actor: "controller", Verb: "get", Object: "deployments/web", Occ: 1}
	tests := []struct {
		name string
		with []interferer
		want []string
	}{
		{"first words differ", []interferer{{cmd: "annotate bob deployments/web team=blue"}, {cmd: "scale alice deployments/web 5"}},
			[]string{"after_controller_get_deployments_web_1st_annotate_bob", "after_controller_get_deployments_web_1st_scale_alice"}},
		{"first words coincide", []interferer{{cmd: "annotate bob deployments/web team=blue"}, {cmd: "annotate bob deployments/web team=red"}, {cmd: "scale alice deployments/web 5"}},
			[]string{"after_controller_get_deployments_web_1st_annotate_bob_deployments_web_team_blue", "after_controller_get_deployments_web_1st_annotate_bob_deployments_web_team_red", "after_controller_get_deployments_web_1st_scale_alice"}},
		{"objects differ", []interferer{{cmd: "annotate bob deployments/web team=blue"}, {cmd: "annotate bob webapps/web team=blue"}},
			[]string{"after_controller_get_deployments_web_1st_annotate_bob_deployments_web", "after_controller_get_deployments_web_1st_annotate_bob_webapps_web"}},
		{"alike", []interferer{{cmd: "bump bob deployments/web"}, {cmd: "bump bob deployments/web"}},
			[]string{"after_controller_get_deployments_web_1st_bump_bob_deployments_web", "after_controller_get_deployments_web_1st_bump_bob_deployments_web_2"}},
		{"every and once", []interferer{{cmd: "bump bob deployments/web", every: true}, {cmd: "bump bob deployments/web"}},
			[]string{"after_controller_get_deployments_web_every_bump_bob", "after_controller_get_deployments_web_1st_bump_bob"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			labels(tc.with)
			var got []string
			for _, in := range tc.with {
				got = append(got, runName([]Hook{{Moment: m, Interferer: in.cmd, Every: in.every, label: in.label}}, true))
			}
			assert.DeepEqual(t, got, tc.want)
			assert.NilError(t, uniqueNames(got))
		})
	}
	assert.ErrorContains(t, uniqueNames([]string{"a", "b", "a"}), "two runs are called a")
}

// TestPlan checks the runs an exploration plans: at depth 1, each kept
// moment (each moment for a with every interferer, and each moment without
// pruning); at depth 2, the pairs, of which those whose first hooks sit at
// twin moments and whose second hooks are the same are one.
func TestPlan(t *testing.T) {
	mo := func(point, verb string) Moment {
		return Moment{Point: point, Actor: "controller", Verb: verb, Object: "deployments/web", Occ: 1}
	}
	// get, update: before get, after get = before update, after update.
	l := learned{all: []Moment{mo("before", "get"), mo("after", "get"), mo("before", "update"), mo("after", "update")}, twin: []int{0, 1, 1, 3}, racing: make([][]Watcher, 4)}
	exhaustive := learned{all: l.all, twin: []int{0, 1, 2, 3}, racing: make([][]Watcher, 4)}
	// after update races with a controller on its own: no hook's moment.
	racing := learned{all: l.all, twin: l.twin, racing: [][]Watcher{nil, nil, nil, {{Name: "mover", Actor: "controller", Watch: "deployments"}}}}
	a := interferer{cmd: "annotate bob deployments/web t=1", label: "annotate_bob"}
	every := interferer{cmd: "bump bob deployments/web", every: true, label: "bump_bob"}
	render := func(runs [][]Hook) []string {
		var out []string
		for _, hs := range runs {
			var s []string
			for _, h := range hs {
				s = append(s, h.Trigger()+": "+h.label)
			}
			out = append(out, strings.Join(s, " + "))
		}
		return out
	}
	tests := []struct {
		name  string
		depth int
		ins   []interferer
		l     learned
		want  []string
	}{
		{"depth 1", 1, []interferer{a}, l, []string{"before controller get deployments/web 1st: annotate_bob", "after controller get deployments/web 1st: annotate_bob", "after controller update deployments/web 1st: annotate_bob"}},
		{"depth 1, every moment", 1, []interferer{a}, exhaustive, []string{"before controller get deployments/web 1st: annotate_bob", "after controller get deployments/web 1st: annotate_bob", "before controller update deployments/web 1st: annotate_bob", "after controller update deployments/web 1st: annotate_bob"}},
		{"depth 1, a racing moment left out", 1, []interferer{a}, racing, []string{"before controller get deployments/web 1st: annotate_bob", "after controller get deployments/web 1st: annotate_bob"}},
		{"depth 1, with every", 1, []interferer{every}, l, []string{"before controller get deployments/web every: bump_bob", "after controller get deployments/web every: bump_bob", "before controller update deployments/web every: bump_bob", "after controller update deployments/web every: bump_bob"}},
		{"depth 2", 2, []interferer{a}, l, []string{
			"before controller get deployments/web 1st: annotate_bob + after controller get deployments/web 1st: annotate_bob",
			"before controller get deployments/web 1st: annotate_bob + before controller update deployments/web 1st: annotate_bob",
			"before controller get deployments/web 1st: annotate_bob + after controller update deployments/web 1st: annotate_bob",
			// the interferer twice at one moment
			"after controller get deployments/web 1st: annotate_bob + before controller update deployments/web 1st: annotate_bob",
			"after controller get deployments/web 1st: annotate_bob + after controller update deployments/web 1st: annotate_bob",
			// before update + after update is after get + after update
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := &exploration{file: "x.txtar", interferers: tc.ins, depth: tc.depth}
			runs, err := e.plan(tc.l)
			assert.NilError(t, err)
			assert.DeepEqual(t, render(runs), tc.want)
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

// TestHeadLines checks where the hooks of a run's script are: at the
// explore and with lines when they have room, else one under another from
// the explore line on; the lines it returns are those the script has the
// hooks at.
func TestHeadLines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		at    int
		with  []int
		heads []string
	}{
		{"room", []string{"create a.yaml", "explore reconcile webapps/web", "with annotate bob x t=1", "with scale alice x 3", "field x"}, 1, []int{2, 3}, []string{"on A"}},
		{"room for two", []string{"create a.yaml", "explore reconcile webapps/web", "with annotate bob x t=1", "with scale alice x 3", "field x"}, 1, []int{2, 3}, []string{"on A", "on B"}},
		{"no room", []string{"create a.yaml", "explore reconcile webapps/web", "with annotate bob x t=1", "field x"}, 1, []int{2}, []string{"on A", "on B"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &exploration{lines: tc.lines, at: tc.at, withAt: tc.with, workload: "reconcile webapps/web", ar: txtar.Parse(nil)}
			script := strings.Split(string(e.script(tc.heads, true)), "\n")
			lines := e.headLines(len(tc.heads))
			assert.Equal(t, len(lines), len(tc.heads))
			for i, n := range lines {
				assert.Equal(t, script[n-1], tc.heads[i], "head %d at line %d of\n%s", i, n, strings.Join(script, "\n"))
			}
		})
	}
}

// TestRunSeams checks the extensions explore adds to the runs it makes: an
// interleaving tolerates the failed action of a hook armed at one of its
// interferers' lines and no other, and an exploration's runs stop at their
// first failure, whatever keeps the run of the explore line going, without
// changing the extensions that run has.
func TestRunSeams(t *testing.T) {
	tol := interferers([]int{3, 4}).Tolerate
	for armed, want := range map[string]bool{"x.txtar:3": true, "x.txtar:4": true, "x.txtar:5": false, "x.txtar:13": false} {
		_, got := tol(nil, language.Failure{Kind: language.FailHookAction, Hook: &language.FailedHook{Armed: armed}})
		assert.Equal(t, got, want, armed)
	}
	keep := &language.Extension{Name: "metamorphic", KeepGoing: true, ReadServer: true}
	other := &language.Extension{Name: "views"}
	in := []*language.Extension{other, keep}
	out := stopping(in)
	assert.Equal(t, len(out), 2)
	assert.Assert(t, out[0] == other, "an extension that keeps nothing going was copied")
	assert.Assert(t, !out[1].KeepGoing && out[1].ReadServer && out[1].Name == "metamorphic", "%+v", out[1])
	assert.Assert(t, keep.KeepGoing && in[1] == keep, "stopping changed the explore line's own run")
}
