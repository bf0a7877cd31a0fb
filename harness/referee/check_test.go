package referee

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/racekit/racekit/harness/record"
)

// Rows for the referee's tests: the controller reads deployments/web at
// rv3, bob moves it on to rv6, and the controller's update of rv3 is
// refused. What follows is each test's.
func refereeStart() []record.Row {
	return []record.Row{
		{Seq: 1, Actor: "controller", Verb: "get", Object: "deployments/web", Code: 200, Reason: "OK", GotRV: "rv3", GotRev: 3},
		{Seq: 2, Actor: "bob", Verb: "patch", Object: "deployments/web", Code: 200, Reason: "OK", GotRV: "rv6", GotRev: 6},
		{Seq: 3, Actor: "controller", Verb: "update", Object: "deployments/web", SentRV: "rv3", SentRev: 3, Code: 409, Reason: "Conflict"},
	}
}

// refetch is the controller's fresh GET after the 409.
var refetch = record.Row{Seq: 4, Actor: "controller", Verb: "get", Object: "deployments/web", Code: 200, Reason: "OK", GotRV: "rv6", GotRev: 6}

// retryRow is the controller's write after the 409, seq 5, with rv.
func retryRow(verb, rv string, rev uint64) record.Row {
	return record.Row{Seq: 5, Actor: "controller", Verb: verb, Object: "deployments/web", SentRV: rv, SentRev: rev, Code: 200, Reason: "OK", GotRV: "rv7", GotRev: 7}
}

// unrelatedWatch is a watch of configmaps the controller reads events of
// throughout: it must change no verdict.
var unrelatedWatch = record.Row{Seq: 0, Actor: "controller", Verb: "watch", Object: "configmaps", Code: 200, Reason: "OK", Shown: []record.Shown{
	{Event: "ADDED", Name: "c", RV: "rv1", Rev: 1, After: 0},
	{Event: "MODIFIED", Name: "c", RV: "rv2", Rev: 2, After: 0},
	{Event: "MODIFIED", Name: "c", RV: "rv4", Rev: 4, After: 3},
	{Event: "MODIFIED", Name: "c", RV: "rv5", Rev: 5, After: 3},
}}

// TestWireRules checks the referee's rules on rows written by hand: after a
// 409, a write sends a version its actor was shown for that object, not the
// refused one, and none older than one it has seen; update, patch and
// delete alike; with and without noise that cannot matter (another
// actor's calls, another object, a watch of something else).
func TestWireRules(t *testing.T) {
	older := refereeStart()
	older = append([]record.Row{{Seq: 0, Actor: "controller", Verb: "get", Object: "deployments/web", Code: 200, Reason: "OK", GotRV: "rv2", GotRev: 2}}, older...)
	tests := []struct {
		name  string
		start []record.Row // refereeStart when nil
		then  []record.Row
		want  []string // each finding's rule and a part of its text
	}{
		{name: "a fresh GET, then its version", then: []record.Row{refetch, retryRow("update", "rv6", 6)}},
		{name: "a patch of the fresh version", then: []record.Row{refetch, retryRow("patch", "rv6", 6)}},
		{name: "the refused version, unread", then: []record.Row{retryRow("update", "rv3", 3)},
			want: []string{"stale object: #5 update deployments/web re-sent rv3, which #3 was refused for, without reading the object again"}},
		{name: "the refused version after a fresh GET", then: []record.Row{refetch, retryRow("update", "rv3", 3)},
			want: []string{"stale resourceVersion: #5 update deployments/web sent rv3 again, which #3 was refused for, though #4 get showed controller rv6 since"}},
		{name: "a patch pinning the refused version after a fresh GET", then: []record.Row{refetch, retryRow("patch", "rv3", 3)},
			want: []string{"stale resourceVersion: #5 patch deployments/web sent rv3 again"}},
		{name: "a delete precondition of the refused version after a fresh GET", then: []record.Row{refetch, retryRow("delete", "rv3", 3)},
			want: []string{"stale resourceVersion: #5 delete deployments/web sent rv3 again"}},
		{name: "an older version than the refused one", start: older, then: []record.Row{retryRow("update", "rv2", 2)},
			want: []string{"stale resourceVersion: #5 update deployments/web sent rv2, older than rv3, which #1 get showed controller before it"}},
		{name: "an older version after a fresh GET", start: older, then: []record.Row{refetch, retryRow("patch", "rv2", 2)},
			want: []string{"stale resourceVersion: #5 patch deployments/web sent rv2, older than rv6, which #4 get showed controller before it"}},
		{name: "a made-up version", then: []record.Row{retryRow("update", "rv4", 4)},
			want: []string{"made-up resourceVersion: #5 update deployments/web sent rv4, which no read showed controller for deployments/web before it (no answer about it, list item or watch event)"}},
		{name: "a version shown to another actor", then: []record.Row{retryRow("update", "rv6", 6)},
			want: []string{"made-up resourceVersion: #5 update deployments/web sent rv6, which no read showed controller for deployments/web before it (no answer about it, list item or watch event); #2 patch showed it to bob, not to controller: "}},
		{name: "a version of another object", then: []record.Row{
			{Seq: 4, Actor: "controller", Verb: "get", Object: "deployments/other", Code: 200, Reason: "OK", GotRV: "rv8", GotRev: 8},
			retryRow("update", "rv8", 8)},
			want: []string{"made-up resourceVersion: #5 update deployments/web sent rv8, which no read showed controller for deployments/web before it (no answer about it, list item or watch event); #4 get showed controller rv8 as a version of deployments/other: "}},
		{name: "a version a watch of the object showed", then: []record.Row{
			{Seq: 4, Actor: "controller", Verb: "watch", Object: "deployments", Code: 200, Reason: "OK", Shown: []record.Shown{{Event: "MODIFIED", Name: "web", RV: "rv6", Rev: 6, After: 4}}},
			retryRow("update", "rv6", 6)}},
		{name: "a version a watch showed before the 409", then: []record.Row{
			{Seq: 4, Actor: "controller", Verb: "watch", Object: "deployments", Code: 200, Reason: "OK", Shown: []record.Shown{{Event: "MODIFIED", Name: "web", RV: "rv6", Rev: 6, After: 2}}},
			retryRow("update", "rv6", 6)}},
		{name: "a version a watch showed only after the write", then: []record.Row{
			{Seq: 4, Actor: "controller", Verb: "watch", Object: "deployments", Code: 200, Reason: "OK", Shown: []record.Shown{{Event: "MODIFIED", Name: "web", RV: "rv6", Rev: 6, After: 5}}},
			retryRow("update", "rv6", 6)},
			want: []string{"made-up resourceVersion: #5 update deployments/web sent rv6"}},
		{name: "a version a watch of another namespace showed", then: []record.Row{
			{Seq: 4, Actor: "controller", Verb: "watch", Object: "deployments", Code: 200, Reason: "OK", Shown: []record.Shown{{Event: "MODIFIED", Namespace: "other", Name: "web", RV: "rv6", Rev: 6, After: 4}}},
			retryRow("update", "rv6", 6)},
			want: []string{"made-up resourceVersion: #5 update deployments/web sent rv6"}},
		{name: "a version a watch of another resource showed", then: []record.Row{
			{Seq: 4, Actor: "controller", Verb: "watch", Object: "webapps", Code: 200, Reason: "OK", Shown: []record.Shown{{Event: "MODIFIED", Name: "web", RV: "rv6", Rev: 6, After: 4}}},
			retryRow("update", "rv6", 6)},
			want: []string{"made-up resourceVersion: #5 update deployments/web sent rv6"}},
		{name: "a newer version a watch showed after the fresh GET", then: []record.Row{
			{Seq: 0, Actor: "controller", Verb: "watch", Object: "deployments", Code: 200, Reason: "OK", Shown: []record.Shown{{Event: "MODIFIED", Name: "web", RV: "rv9", Rev: 9, After: 4}}},
			refetch, retryRow("update", "rv6", 6)}},
		{name: "a newer version a watch showed before the read of the one sent", then: []record.Row{
			{Seq: 0, Actor: "controller", Verb: "watch", Object: "deployments", Code: 200, Reason: "OK", Shown: []record.Shown{{Event: "MODIFIED", Name: "web", RV: "rv9", Rev: 9, After: 3}}},
			refetch, retryRow("update", "rv6", 6)},
			want: []string{"stale resourceVersion: #5 update deployments/web sent rv6, older than rv9, which a MODIFIED event of watch #0 showed controller before it"}},
		{name: "a version a list showed", then: []record.Row{
			{Seq: 4, Actor: "controller", Verb: "list", Object: "deployments", Code: 200, Reason: "OK", GotRV: "rv*", Shown: []record.Shown{{Name: "other", RV: "rv5", Rev: 5}, {Name: "web", RV: "rv6", Rev: 6}}},
			retryRow("update", "rv6", 6)}},
		{name: "a 409 with no reason is no conflict", start: []record.Row{
			{Seq: 1, Actor: "controller", Verb: "get", Object: "deployments/web", Code: 200, Reason: "OK", GotRV: "rv3", GotRev: 3},
			{Seq: 3, Actor: "controller", Verb: "update", Object: "deployments/web", SentRV: "rv3", SentRev: 3, Code: 409, Reason: "Conflict", NoReason: true}},
			then: []record.Row{retryRow("update", "rv3", 3)},
			want: []string{"retry of a non-conflict: #5 update deployments/web came after #3 update was refused with 409 Conflict"}},
		{name: "the refused version re-sent to another scenario's namespace", then: []record.Row{
			{Seq: 4, Actor: "controller", Verb: "update", Object: "deployments/web", SentRV: "rv3", SentRev: 3, Code: 200, Reason: "OK", OtherNamespace: "theirs"}}},
		{name: "a blind update", then: []record.Row{refetch, retryRow("update", "", 0)},
			want: []string{"blind update: #5 update deployments/web sent no resourceVersion"}},
		{name: "a patch without a resourceVersion after a fresh GET", then: []record.Row{refetch, retryRow("patch", "", 0)}},
		{name: "a patch without a resourceVersion, unread", then: []record.Row{retryRow("patch", "", 0)},
			want: []string{"stale object: #5 patch deployments/web dropped rv3, which #3 was refused for, and sent no resourceVersion"}},
	}
	for _, tc := range tests {
		start := tc.start
		if start == nil {
			start = refereeStart()
		}
		rows := append(append([]record.Row(nil), start...), tc.then...)
		for _, noise := range []bool{false, true} {
			name := tc.name
			if noise {
				name += ", with noise"
				rows = append(append([]record.Row{unrelatedWatch,
					{Seq: 0, Actor: "carol", Verb: "get", Object: "deployments/web", Code: 200, Reason: "OK", GotRV: "rv9", GotRev: 9},
					{Seq: 0, Actor: "controller", Verb: "get", Object: "webapps/web", Code: 200, Reason: "OK", GotRV: "rv1", GotRev: 1},
				}, rows...), record.Row{Seq: 6, Actor: "carol", Verb: "update", Object: "deployments/web", SentRV: "rv4", Code: 409, Reason: "Conflict"})
			}
			t.Run(name, func(t *testing.T) {
				c := Check{Actor: "controller", Steps: 5}
				var got []string
				for _, f := range c.Findings(rows) {
					got = append(got, f.Rule+": "+f.Text)
				}
				if len(got) != len(tc.want) {
					t.Fatalf("findings (-want +got)\n%s", cmp.Diff(tc.want, got))
				}
				for i := range got {
					if !strings.HasPrefix(got[i], tc.want[i]) {
						t.Errorf("finding %d:\n got %s\nwant %s...", i, got[i], tc.want[i])
					}
				}
			})
		}
	}
}

// TestWireRulesOfAReconcile checks the rules of one reconcile: no write
// more often than a retry's attempts, no side effect twice, and only the
// calls of the span judged.
func TestWireRulesOfAReconcile(t *testing.T) {
	var rows []record.Row
	for i := 1; i <= 6; i++ {
		rows = append(rows, record.Row{Seq: 2*i - 1, Actor: "controller", Verb: "update", Object: "deployments/web", SentRV: "rv1", SentRev: 1, Code: 200, Reason: "OK", GotRV: "rv2", GotRev: 2},
			record.Row{Seq: 2 * i, Actor: "controller", Verb: "create", Object: "registrations/web", Code: 201, Reason: "Created", Service: "registry"})
	}
	c := Check{Actor: "controller", OneReconcile: true, Steps: 5, SideEffect: func(r string) bool { return r == "registrations" }}
	var got []string
	for _, f := range c.Findings(rows) {
		got = append(got, f.Rule+": "+f.Text)
	}
	want := []string{
		"unbounded retry: one reconcile sent 6 update deployments/web, more than the 5 attempts a retry makes: when the retries run out, the Conflict goes back to the caller",
		"side effect in retry: one reconcile sent 6 create registrations/web: the side effect ran inside a retry, once per attempt; it belongs outside any retry, once per reconcile",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	c.From, c.To = 3, 4
	if fs := c.Findings(rows); len(fs) != 0 {
		t.Errorf("the span 3-4 has an update and a create, which break no rule, got %v", fs)
	}
}
