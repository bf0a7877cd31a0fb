package auto

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
)

// TestFlatten checks the base mask, the masked values (times, the
// namespace) and list elements keyed by name.
func TestFlatten(t *testing.T) {
	obj := map[string]any{
		"metadata": map[string]any{"name": "a", "uid": "u1", "resourceVersion": "7", "generation": int64(3),
			"deletionTimestamp": "2026-01-02T03:04:05Z", "ownerReferences": []any{map[string]any{"name": "o", "uid": "u2"}}},
		"spec":   map[string]any{"host": "a.ns-1.svc", "ports": []any{map[string]any{"name": "b", "port": int64(2)}, map[string]any{"name": "a", "port": int64(1)}}},
		"status": map[string]any{"observedGeneration": int64(3), "list": []any{"x"}},
	}
	want := map[string]string{
		"metadata.name":                         `"a"`,
		"metadata.deletionTimestamp":            "<time>",
		"metadata.ownerReferences[name=o].name": `"o"`,
		"spec.host":                             `"a.$NAMESPACE.svc"`,
		"spec.ports[name=a].name":               `"a"`,
		"spec.ports[name=a].port":               "1",
		"spec.ports[name=b].name":               `"b"`,
		"spec.ports[name=b].port":               "2",
		"status.list[0]":                        `"x"`,
	}
	assert.DeepEqual(t, Flatten(obj, "ns-1"), want)
}

// TestDiff checks what the oracle reports of a run against a reference,
// with the masks two references make.
func TestDiff(t *testing.T) {
	ref := State{Read: true, Objects: map[string]map[string]string{
		"configmaps/dst": {"data.value": `"moved"`, "data.n": "1"},
		"configmaps/job": {"data.done": `"true"`},
		"leases/l":       {"spec.holder": `"x"`},
		"pods/p-abc":     {"spec.x": "1"},
	}, History: History{"delete op statefulsets/s 200": 1}}
	ref2 := State{Read: true, Objects: map[string]map[string]string{
		"configmaps/dst": {"data.value": `"moved"`, "data.n": "1"},
		"configmaps/job": {"data.done": `"true"`},
		"leases/l":       {"spec.holder": `"y"`},
		"pods/p-def":     {"spec.x": "1"},
	}, History: History{"delete op statefulsets/s 200": 1}}
	m := MasksOf([]State{ref, ref2})
	tests := []struct {
		name string
		run  State
		want []explore.Difference
	}{
		{"the same", ref2, nil},
		{"not read", State{}, nil},
		{"a field", State{Read: true, Objects: map[string]map[string]string{
			"configmaps/dst": {"data.value": `""`, "data.n": "1"}, "configmaps/job": {"data.done": `"true"`}, "leases/l": {"spec.holder": `"z"`}, "pods/p-xyz": {}},
			History: History{"delete op statefulsets/s 200": 1}},
			[]explore.Difference{{Kind: "field", Object: "configmaps/dst", Field: "data.value", Reference: `"moved"`, Run: `""`}}},
		{"an object and a count", State{Read: true, Objects: map[string]map[string]string{
			"configmaps/job": {"data.done": `"true"`, "data.extra": "2"}, "leases/l": {}},
			History: History{"delete op statefulsets/s 200": 2}},
			[]explore.Difference{
				{Kind: "object", Object: "configmaps/dst", Reference: "present", Run: "absent"},
				{Kind: "field", Object: "configmaps/job", Field: "data.extra", Reference: "<absent>", Run: "2"},
				{Kind: "history", Object: "statefulsets/s", Field: "delete by op (200)", Reference: "1", Run: "2"},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.DeepEqual(t, Diff(ref, tc.run, m), tc.want)
		})
	}
	fields, unstable := m.List()
	assert.DeepEqual(t, fields, []string{"leases/l spec.holder"})
	assert.DeepEqual(t, unstable, []string{"pods"})
}

// TestWithout checks that a difference the twin shows too, by object and
// field whatever the values, is set aside and counted.
func TestWithout(t *testing.T) {
	ds := []explore.Difference{{Kind: "field", Object: "a/b", Field: "x", Reference: "1", Run: "2"}, {Kind: "field", Object: "a/b", Field: "y"}}
	got, n := Without(ds, []explore.Difference{{Kind: "field", Object: "a/b", Field: "x", Reference: "1", Run: "3"}})
	assert.Equal(t, n, 1)
	assert.DeepEqual(t, got, ds[1:])
}

// TestPrefixAndHistory checks the stale planner's sets of writes before a
// moment and the history's counts.
func TestPrefixAndHistory(t *testing.T) {
	rows := []record.Row{
		{Seq: 1, Actor: "setup", Verb: "create", Object: "configmaps/a", Code: 201},
		{Seq: 2, Actor: "op", Verb: "get", Object: "configmaps/a", Code: 200},
		{Seq: 3, Actor: "op", Verb: "update", Object: "configmaps/a", Code: 409},
		{Seq: 4, Actor: "op", Verb: "delete", Object: "configmaps/a", Code: 200},
		{Seq: 5, Actor: "op", Verb: "create", Object: "events", Code: 201},
		{Seq: 6, Actor: "op", Verb: "delete", Object: "registrations/a", Code: 204, Service: "registry"},
		{Seq: 7, Actor: "op", Verb: "delete", Object: "registrations/a", Code: 204, Service: "registry"},
		{Seq: 8, Actor: "op", Verb: "create", Object: "registrations/a", Code: 409, Service: "registry"},
	}
	w := writesTo(rows, "configmaps")
	assert.DeepEqual(t, w, []int{1, 4})
	assert.Equal(t, prefix(w, "before", 4), "1")
	assert.Equal(t, prefix(w, "after", 4), "1,4")
	if d := cmp.Diff(HistoryOf(rows), History{"create setup configmaps/a 201": 1, "delete op configmaps/a 200": 1, "delete op registrations/a 204": 1}); d != "" {
		t.Error(d)
	}
}

// TestMarkAt checks which moment each distinct view of a resource is
// marked at: right after the write that made it when that is a moment,
// else right before the next write, else the first moment with that
// view; a moment that is not plannable
// is never chosen.
func TestMarkAt(t *testing.T) {
	mo := func(point, actor, verb string) explore.Moment {
		return explore.Moment{Point: point, Actor: actor, Verb: verb, Object: "things/a", Occ: 1}
	}
	// Calls: 10 op status update (write), 11 alice delete (write), 12 op get.
	l := &explore.Learned{
		Moments: []explore.Moment{
			mo("before", "op", "update"), mo("after", "op", "update"),
			mo("before", "alice", "delete"), mo("after", "alice", "delete"),
			mo("before", "op", "get"), mo("after", "op", "get"),
		},
		Seq: []int{10, 10, 11, 11, 12, 12},
	}
	all := func(int) bool { return true }
	for _, tc := range []struct {
		name      string
		writes    []int
		plannable func(int) bool
		want      []int
	}{
		{"after each write", []int{10, 11}, all, []int{0, 1, 3}},
		{"no write is a moment's own", []int{5}, all, []int{0}},
		{"the write's after is not plannable: the next write's before", []int{10, 11}, func(i int) bool { return i != 1 }, []int{0, 2, 3}},
		{"neither: the first moment", []int{10, 11}, func(i int) bool { return i != 3 }, []int{0, 1, 4}},
		{"nothing plannable", []int{10}, func(int) bool { return false }, []int{}},
		{"only a read is plannable", []int{10, 11}, func(i int) bool { return i == 4 }, []int{4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.DeepEqual(t, markAt(l, tc.writes, tc.plannable), tc.want)
		})
	}
}

// TestWindows checks the unobserved class's windows: two or more writes
// of others' to one object in the workload, with no write of the
// operator's between them, and one across them all when the operator
// wrote in between; the setup's writes, failed writes and the operator's
// own are no window.
func TestWindows(t *testing.T) {
	row := func(seq int, actor, verb, object string, code int) record.Row {
		return record.Row{Seq: seq, Actor: actor, Verb: verb, Object: object, Code: code}
	}
	for _, tc := range []struct {
		name string
		rows []record.Row
		want []Window
	}{
		{"two scales", []record.Row{
			row(1, "setup", "create", "things/a", 201),
			row(3, "alice", "update", "things/a", 200),
			row(4, "op", "get", "things/a", 200),
			row(5, "alice", "update", "things/a", 200),
		}, []Window{{Resource: "things", Object: "things/a", First: 3, Last: 5, Writes: 2}}},
		{"the operator writes between", []record.Row{
			row(3, "alice", "update", "things/a", 200),
			row(4, "op", "update", "others/b/status", 200),
			row(5, "alice", "update", "things/a", 200),
		}, []Window{{Resource: "things", Object: "things/a", First: 3, Last: 5, Across: true, Writes: 2}}},
		{"longest run, then a window after the operator's write", []record.Row{
			row(3, "alice", "update", "things/a", 200),
			row(4, "op", "update", "others/b", 200),
			row(5, "alice", "delete", "things/a", 200),
			row(6, "bob", "create", "things/a", 201),
			row(7, "alice", "patch", "things/a/status", 200),
		}, []Window{
			{Resource: "things", Object: "things/a", First: 5, Last: 7, Writes: 3},
			{Resource: "things", Object: "things/a", First: 3, Last: 7, Across: true, Writes: 4},
		}},
		{"a failed write and a setup write are none", []record.Row{
			row(2, "alice", "update", "things/a", 200),
			row(3, "alice", "update", "things/a", 409),
			row(5, "alice", "update", "things/b", 200),
		}, nil},
		{"an unwatched resource", []record.Row{
			row(3, "alice", "update", "pods/a", 200),
			row(5, "alice", "update", "pods/a", 200),
		}, nil},
		{"two objects", []record.Row{
			row(3, "alice", "update", "things/a", 200),
			row(4, "alice", "update", "things/b", 200),
			row(5, "alice", "update", "things/a", 200),
			row(6, "alice", "update", "things/b", 200),
		}, []Window{{"things", "things/a", 3, 5, false, 2}, {"things", "things/b", 4, 6, false, 2}}},
		{"the operator's write between two others' is no split of a third's", []record.Row{
			row(3, "alice", "update", "things/a", 200),
			row(4, "op", "update", "things/a", 200),
			row(5, "bob", "update", "things/a", 200),
		}, []Window{{Resource: "things", Object: "things/a", First: 3, Last: 5, Across: true, Writes: 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := windows(tc.rows, 2, "op", []string{"things"})
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestCut checks which waits an unobserved plan across the operator's
// writes leaves out of the workload: the operator's (await by its actor,
// idle by its name) strictly between the commands that make the window's
// first and last writes, and no plan when the workload does not name each
// write (a create of a file, a single command).
func TestCut(t *testing.T) {
	op := Operator{Name: "op", Actor: "op-actor"}
	w := Window{Resource: "things", Object: "things/a", First: 3, Last: 7, Across: true, Writes: 2}
	for _, tc := range []struct {
		name, workload string
		want           string
		dropped        int
		ok             bool
	}{
		{"two scales with a wait between", "do scale alice things/a 3 ; await op-actor update others/b 200 ; idle op ; scale alice things/a 2 ; idle op",
			"do scale alice things/a 3 ; scale alice things/a 2 ; idle op", 2, true},
		{"another actor's wait stays", "do scale alice things/a 3 ; await bob update others/b 200 ; idle other ; patch alice things/a/status merge {} ; await op-actor update others/b 200",
			"do scale alice things/a 3 ; await bob update others/b 200 ; idle other ; patch alice things/a/status merge {} ; await op-actor update others/b 200", 0, true},
		{"nothing to cut", "do scale alice things/a 3 ; scale alice things/a 2", "do scale alice things/a 3 ; scale alice things/a 2", 0, true},
		{"a create names no object", "do delete alice things/a ; await op-actor update things/a 200 ; create a.yaml", "", 0, false},
		{"more named writes than the window's", "do scale alice things/a 3 ; scale alice things/a 4 ; scale alice things/a 2", "", 0, false},
		{"another object", "do scale alice things/b 3 ; scale alice things/b 2", "", 0, false},
		{"one command", "scale alice things/a 3", "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, dropped, ok := cut(tc.workload, w, op)
			assert.Equal(t, ok, tc.ok)
			assert.Equal(t, got, tc.want)
			assert.Equal(t, dropped, tc.dropped)
		})
	}
}

// TestRetrying checks when a run's end state is not the operator's last
// word: its last write was refused with 409 (a retry waits in a
// back-off); a 409 followed by a write that took, another actor's 409, or
// a read's, is not.
func TestRetrying(t *testing.T) {
	row := func(actor, verb string, code int) record.Row {
		return record.Row{Actor: actor, Verb: verb, Object: "things/a", Code: code}
	}
	for _, tc := range []struct {
		name string
		rows []record.Row
		want bool
	}{
		{"last write refused", []record.Row{row("op", "update", 200), row("op", "update", 409), row("op", "get", 200)}, true},
		{"refused, then taken", []record.Row{row("op", "update", 409), row("op", "patch", 200)}, false},
		{"another actor's 409", []record.Row{row("op", "update", 200), row("bob", "update", 409)}, false},
		{"a delete refused", []record.Row{row("op", "delete", 409)}, true},
		{"no write", []record.Row{row("op", "get", 200)}, false},
		{"one of two operators", []record.Row{row("op", "update", 200), row("op2", "update", 409)}, true},
		{"refused, then the error written to another object", []record.Row{row("op", "update", 409), {Actor: "op", Verb: "update", Object: "others/b/status", Code: 200}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, retrying(tc.rows, []string{"op", "op2"}), tc.want)
		})
	}
	ds := []explore.Difference{{Kind: "field", Object: "things/a"}, {Kind: "history", Object: "things/a"}, {Kind: "failure", Object: "idle op"}, {Kind: "object", Object: "things/b"}}
	kept, left := historyAndFailures(ds)
	if d := cmp.Diff([]explore.Difference{ds[1], ds[2]}, kept); d != "" {
		t.Errorf("kept (-want +got):\n%s", d)
	}
	assert.Equal(t, left, 2)
}

// TestJudge checks the oracle's verdict on one run against references in
// which an object's size is 3: a difference is a failure; a run that
// read its end state and differs in nothing passes; a run whose end state
// was never read, because of a failure its neutral twin had too, is n/a,
// not a pass (nothing says what its fault did); one that failed where its
// twin did not is a failure; one whose hook never fired, or fired only
// once the end state was being read, is n/a, whatever else it shows.
func TestJudge(t *testing.T) {
	ref := State{Read: true, Resources: []string{"configmaps"}, Objects: map[string]map[string]string{"configmaps/a": {"data.size": `"3"`}}}
	failed := language.Failure{Kind: language.FailCommand, Command: "await op watch configmaps 200", Message: "ran out of time"}
	neverFired := language.Failure{Kind: language.FailUnfired, Command: "release op configmaps relist",
		Hook: &language.FailedHook{ID: 2, Trigger: "after kcm patch configmaps/a 2nd", Armed: "x.txtar:9"}}
	late := ref
	late.Late = []string{"before op update services/s 3rd"}
	lateCreate := late
	lateCreate.History = History{"create op configmaps/lock 201": 1}
	for _, tc := range []struct {
		name        string
		run         State
		fails, twin []language.Failure
		passed, na  bool
	}{
		{"same end state", ref, nil, nil, true, false},
		{"another size", State{Read: true, Resources: ref.Resources, Objects: map[string]map[string]string{"configmaps/a": {"data.size": `"2"`}}}, nil, nil, false, false},
		{"unread, the twin failed so too", State{}, []language.Failure{failed}, []language.Failure{failed}, false, true},
		{"unread, the twin did not fail", State{}, []language.Failure{failed}, nil, false, false},
		{"its hold never released, the workload stuck", ref, []language.Failure{failed, neverFired}, nil, false, true},
		{"its restart came after the read", late, nil, nil, false, true},
		{"its restart came after the read, a create with it", lateCreate, nil, nil, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOracle([]State{ref, ref}, []explore.Interleaving{{}})
			twinState := ref
			if len(tc.twin) > 0 {
				twinState = State{}
			}
			o.twin("g", explore.Plan{Name: "twin"}, twinState, explore.Interleaving{Failures: tc.twin})
			il := explore.Interleaving{Failures: tc.fails}
			o.judge(&il, tc.run, "g")
			assert.Equal(t, il.Passed, tc.passed, "differences: %v", il.Differences)
			assert.Equal(t, il.NotApplicable, tc.na, "why: %s", il.NotApplicableWhy)
		})
	}
}

// TestStalled checks when a plan that cut the workload's waits is n/a:
// when the workload's own line failed in it (a later command needed what
// the cut waits waited for), and not when another line failed, or a
// failure was tolerated or an unfired hook.
func TestStalled(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    language.Failure
		na   bool
	}{
		{"the workload failed", language.Failure{Kind: language.FailCommand, Line: 12, Message: "already exists"}, true},
		{"the tail failed", language.Failure{Kind: language.FailCommand, Line: 13, Message: "ran out of time"}, false},
		{"tolerated", language.Failure{Kind: language.FailCommand, Line: 12, Tolerated: true}, false},
		{"an unfired hook", language.Failure{Kind: language.FailUnfired, Line: 12}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			il := explore.Interleaving{Failures: []language.Failure{tc.f}}
			stalled(&il, 12)
			assert.Equal(t, il.NotApplicable, tc.na, "why: %s", il.NotApplicableWhy)
		})
	}
}

// TestConditions checks the condition lines a regression scenario claims:
// one per condition whose status differed, with the reference's status
// and, when it differed too, reason; none for a condition whose reason
// alone differed, or that the references lacked.
func TestConditions(t *testing.T) {
	f := func(object, field, ref string) explore.Difference {
		return explore.Difference{Kind: "field", Object: object, Field: field, Reference: ref, Run: `"x"`}
	}
	ds := []explore.Difference{
		f("things/a", "status.conditions[type=Ready].message", `"m"`),
		f("things/a", "status.conditions[type=Ready].reason", `"Refused"`),
		f("things/a", "status.conditions[type=Ready].status", `"False"`),
		f("things/a", "status.conditions[type=Synced].reason", `"Late"`),
		f("things/b", "status.conditions[type=Ready].status", `"True"`),
		f("things/c", "status.conditions[type=Ready].status", "<absent>"),
		f("things/a", "spec.size", "3"),
	}
	lines, asserted := conditions(ds)
	assert.DeepEqual(t, lines, map[int]string{1: "condition things/a Ready False Refused", 4: "condition things/b Ready True"})
	assert.DeepEqual(t, asserted, map[int]bool{1: true, 2: true, 4: true})
}

// TestAssertion checks the line that claims the references' side of a
// difference, and that a difference no command can claim has none.
func TestAssertion(t *testing.T) {
	for _, tc := range []struct {
		d    explore.Difference
		want string
	}{
		{explore.Difference{Kind: "field", Object: "things/a", Field: "spec.size", Reference: "3", Run: "2"}, "field things/a spec.size 3"},
		{explore.Difference{Kind: "field", Object: "things/a", Field: "spec.note", Reference: `"a b"`, Run: "<absent>"}, "field things/a spec.note 'a b'"},
		{explore.Difference{Kind: "field", Object: "things/a", Field: "metadata.annotations.example.com/created", Reference: "<time>", Run: "<absent>"}, "annotation things/a example.com/created"},
		{explore.Difference{Kind: "field", Object: "things/a", Field: "metadata.annotations.example.com/team", Reference: `"blue"`, Run: `"red"`}, "annotation things/a example.com/team=blue"},
		{explore.Difference{Kind: "field", Object: "things/a", Field: "metadata.annotations.example.com/left", Reference: "<absent>", Run: `"x"`}, "! annotation things/a example.com/left"},
		{explore.Difference{Kind: "field", Object: "things/a", Field: "spec.template.metadata.annotations.example.com/restart", Reference: "<time>", Run: "<absent>"}, ""},
		{explore.Difference{Kind: "field", Object: "things/a", Field: "status.at", Reference: "<time>", Run: "<absent>"}, ""},
		{explore.Difference{Kind: "history", Object: "things/a", Field: "delete by op (200)", Reference: "1", Run: "2"}, "wire op delete things/a 200 1"},
		{explore.Difference{Kind: "object", Object: "things/a", Reference: "present", Run: "absent"}, "get setup things/a auto-found"},
		{explore.Difference{Kind: "object", Object: "things/a", Reference: "absent", Run: "present"}, "! get setup things/a auto-gone"},
	} {
		t.Run(tc.d.Field+tc.d.Kind, func(t *testing.T) {
			got, ok := assertion(tc.d)
			assert.Equal(t, ok, tc.want != "")
			assert.Equal(t, got, tc.want)
		})
	}
}

// TestMasksOfThree checks the masks of three references: what any of them
// differs on from the first is masked, so a third run shows noise the
// first two happened to agree on; Empty says whether the references
// agreed at all.
func TestMasksOfThree(t *testing.T) {
	ref := func(size, owner string) State {
		return State{Read: true, Objects: map[string]map[string]string{"configmaps/a": {"data.size": size, "data.owner": owner}}}
	}
	two := MasksOf([]State{ref(`"3"`, `"x"`), ref(`"3"`, `"x"`)})
	assert.Assert(t, two.Empty(), "two references that agree mask %v", two)
	three := MasksOf([]State{ref(`"3"`, `"x"`), ref(`"3"`, `"y"`), ref(`"4"`, `"x"`)})
	assert.Assert(t, !three.Empty())
	assert.DeepEqual(t, three.Fields, map[string]map[string]bool{"configmaps/a": {"data.owner": true, "data.size": true}})
}

// TestLeaderRecordsGenerated checks, over generated pairs of end states,
// that the oracle leaves leader-election records out and nothing else:
// objects of four resources, each absent, plain or carrying client-go's
// leader annotation, with counts of creates. Diff and MasksOf give what
// they give for the same states with every record (an annotated ConfigMap
// or Endpoints, in either state) and its history removed by the
// generator (kept without LeaderRecord), no difference names a record,
// and the objects with differences are exactly those, but the records,
// whose presence, fields or counts the generator made differ.
func TestLeaderRecordsGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 37))
	resources := []string{"configmaps", "endpoints", "secrets", "services"}
	names := []string{"a", "lock"}
	const ns = "ns-1"
	for n := range 3000 {
		type obj struct {
			present, leader bool
			value           int
			creates         int
		}
		gen := func() map[string]obj {
			out := map[string]obj{}
			for _, res := range resources {
				for _, name := range names {
					o := obj{present: r.IntN(3) > 0, value: r.IntN(2), creates: r.IntN(3)}
					o.leader = o.present && r.IntN(2) == 0
					out[res+"/"+name] = o
				}
			}
			return out
		}
		build := func(objs map[string]obj, drop map[string]bool) State {
			st := State{Read: true, Objects: map[string]map[string]string{}, History: History{}}
			for key, o := range objs {
				res, name, _ := strings.Cut(key, "/")
				if drop[key] {
					continue
				}
				if o.creates > 0 {
					st.History[historyKey("create", "op", key, 201)] = o.creates
				}
				if !o.present {
					continue
				}
				md := map[string]any{"name": name, "namespace": ns}
				if o.leader {
					md["annotations"] = map[string]any{"control-plane.alpha.kubernetes.io/leader": `{"holderIdentity":"x"}`}
				}
				body := map[string]any{"metadata": md, "data": map[string]any{"v": strconv.Itoa(o.value)}}
				if drop == nil {
					st.Add(res, name, body, ns)
				} else {
					// Without the rule under test: every object kept
					// is one to compare.
					st.Objects[key] = Flatten(body, ns)
				}
			}
			return st
		}
		refObjs, runObjs := gen(), gen()
		// records are what the generator knows to be leader records: an
		// annotated ConfigMap or Endpoints in either state.
		records := map[string]bool{}
		for _, objs := range []map[string]obj{refObjs, runObjs} {
			for key, o := range objs {
				if res := resourceOf(key); o.leader && (res == "configmaps" || res == "endpoints") {
					records[key] = true
				}
			}
		}
		ref, run := build(refObjs, nil), build(runObjs, nil)
		sref, srun := build(refObjs, records), build(runObjs, records)
		if len(records) == 0 {
			// build keeps every object of a nil drop by Add.
			sref, srun = build(refObjs, map[string]bool{}), build(runObjs, map[string]bool{})
		}
		m := MasksOf([]State{ref, run})
		got := Diff(ref, run, Masks{})
		assert.DeepEqual(t, got, Diff(sref, srun, Masks{}))
		assert.DeepEqual(t, m, MasksOf([]State{sref, srun}))
		for _, d := range got {
			assert.Check(t, !records[d.Object], "case %d: a difference of a leader record: %v", n, d)
		}
		// Each object but a record that differs, and only such, has a
		// difference.
		want, named := map[string]bool{}, map[string]bool{}
		for key := range refObjs {
			a, b := refObjs[key], runObjs[key]
			if !records[key] && (a.creates != b.creates || a.present != b.present || a.present && (a.value != b.value || a.leader != b.leader)) {
				want[key] = true
			}
		}
		for _, d := range got {
			named[d.Object] = true
		}
		assert.DeepEqual(t, named, want)
	}
}
