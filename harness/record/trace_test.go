package record

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/hooks"
)

func exchange(seq int, actor, verb, res, name string, sent string, code int, reason, got string) Entry {
	return Entry{Exchange: &Exchange{
		Seq:    seq,
		Call:   hooks.Call{Actor: actor, Verb: verb, Resource: res, Namespace: "rk-x-abcde", Name: name},
		SentRV: sent, Code: code, Reason: reason, GotRV: got,
		Start: time.Unix(int64(seq), 0), Duration: time.Duration(seq) * time.Millisecond,
	}}
}

// TestNormalize checks the normalized form: symbols in order of first
// appearance, the same symbol for the same value, and no timestamps,
// durations or namespaces.
func TestNormalize(t *testing.T) {
	tr := Trace{
		exchange(1, "controller", "get", "deployments", "web", "", 200, "OK", "1041"),
		{Hook: &HookFiring{ID: 1, Trigger: "after controller get deployments/web 1st", Action: "annotate bob deployments/web team=blue"}},
		{View: &ViewChange{Change: ViewHold, Actor: "controller", Resource: "deployments", Cache: "webapp"}},
		exchange(2, "bob", "patch", "deployments", "web", "", 200, "OK", "1050"),
		exchange(3, "controller", "update", "deployments", "web", "1041", 409, "Conflict", ""),
	}
	tr[0].Exchange.GotUID = "not-shown-on-a-get"
	want := `1 controller get    deployments/web          -> 200 OK       rv1
   hook 1 fired (after controller get deployments/web 1st): annotate bob deployments/web team=blue
   view: hold controller deployments in the cache of webapp
2 bob        patch  deployments/web          -> 200 OK       rv2
3 controller update deployments/web sent rv1 -> 409 Conflict
`
	if diff := cmp.Diff(want, tr.Normalize()); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
}

// TestNormalizeIsStable checks that two runs whose raw resourceVersions and
// UIDs differ, but whose pattern is the same, normalize to the same bytes,
// and that a different pattern does not.
func TestNormalizeIsStable(t *testing.T) {
	run := func(base int, uid string, sameRV bool) Trace {
		rv := func(n int) string { return time.Duration(base + n).String() }
		second := rv(2)
		if sameRV {
			second = rv(1)
		}
		c := exchange(1, "setup", "create", "webapps", "web", "", 201, "Created", rv(1))
		c.Exchange.GotUID = uid
		return Trace{c, exchange(2, "controller", "update", "webapps", "web", rv(1), 200, "OK", second)}
	}
	a, b := run(1000, "u-1", false).Normalize(), run(98765, "u-2", false).Normalize()
	assert.Equal(t, a, b)
	assert.Assert(t, a != run(1000, "u-1", true).Normalize(), "a no-op write (same rv) must render differently")
}

func TestCallsAndRoundTrips(t *testing.T) {
	tr := Trace{
		exchange(1, "controller", "update", "deployments", "web", "1", 409, "Conflict", ""),
		exchange(2, "controller", "update", "deployments", "web", "2", 409, "Conflict", ""),
		exchange(3, "controller", "update", "deployments", "web", "3", 200, "OK", "4"),
		exchange(4, "bob", "update", "deployments", "web", "3", 409, "Conflict", ""),
	}
	codes := func(xs []*Exchange) []int {
		var out []int
		for _, x := range xs {
			out = append(out, x.Code)
		}
		return out
	}
	assert.DeepEqual(t, codes(tr.Calls("controller", "update", "deployments/web")), []int{409, 409, 200})
	assert.DeepEqual(t, codes(tr.Calls("bob", "update", "deployments/web")), []int{409})
	assert.Assert(t, tr.Calls("bob", "patch", "deployments/web") == nil)
	assert.Equal(t, tr.RoundTrips(), 10*time.Millisecond)
}

func TestSentVersion(t *testing.T) {
	tests := []struct {
		name, body, rv, uid string
	}{
		{"update", `{"metadata":{"name":"web","resourceVersion":"12"}}`, "12", ""},
		{"merge patch without rv", `{"metadata":{"annotations":{"a":"b"}}}`, "", ""},
		{"delete preconditions", `{"kind":"DeleteOptions","preconditions":{"resourceVersion":"7","uid":"u"}}`, "7", "u"},
		{"json patch test", `[{"op":"test","path":"/metadata/resourceVersion","value":"9"},{"op":"replace","path":"/spec/replicas","value":3}]`, "9", ""},
		{"json patch without rv", `[{"op":"replace","path":"/spec/replicas","value":3}]`, "", ""},
		{"not json", `garbage`, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rv, uid := sentVersion([]byte(tc.body))
			assert.Equal(t, rv, tc.rv)
			assert.Equal(t, uid, tc.uid)
		})
	}
}

// TestHookActionValues checks that the raw resourceVersions and UIDs that a
// hook's action carries (a script's $RV or $UID, expanded) render as the
// symbols the trace has given them, whole words only.
func TestHookActionValues(t *testing.T) {
	create := exchange(1, "setup", "create", "webapps", "web", "", 201, "Created", "1041")
	create.Exchange.GotUID = "6f1c2a3e-0d4b-4c55-9e1a-2b7f00c0ffee"
	list := exchange(2, "alice", "list", "webapps", "", "", 200, "OK", "1077")
	tests := []struct {
		action, want string
	}{
		{"update bob snap resourceVersion=1041", "update bob snap resourceVersion=rv1"},
		{"delete bob webapps/web uid=6f1c2a3e-0d4b-4c55-9e1a-2b7f00c0ffee", "delete bob webapps/web uid=uid1"},
		{"watch bob webapps w resourceVersion=1077", "watch bob webapps w resourceVersion=rv*"},
		{"scale bob webapps/web 10410", "scale bob webapps/web 10410"}, // not a value: a longer word
		{"scale bob webapps/web 3", "scale bob webapps/web 3"},
		{"annotate bob webapps/web note=x1041", "annotate bob webapps/web note=x1041"},
	}
	for _, tc := range tests {
		t.Run(tc.action, func(t *testing.T) {
			tr := Trace{create, list, {Hook: &HookFiring{ID: 1, Trigger: "after alice list webapps 1st", Action: tc.action}}}
			rows := tr.Rows()
			assert.Equal(t, rows[2].Hook.Action, tc.want)
		})
	}
}

// TestRenderingsHideWhatReadsShowed checks that what lists and watches
// showed their actors changes no rendering of a trace, so that every
// golden trace reads as it did before the recorder kept it; and that its
// versions take symbols after the exchanges', reusing those known.
func TestRenderingsHideWhatReadsShowed(t *testing.T) {
	plain := Trace{
		exchange(1, "setup", "create", "configmaps", "a", "", 201, "Created", "10"),
		exchange(2, "controller", "watch", "configmaps", "", "", 200, "OK", ""),
		exchange(3, "controller", "list", "configmaps", "", "", 200, "OK", "12"),
		exchange(4, "bob", "patch", "configmaps", "a", "", 200, "OK", "13"),
		exchange(5, "controller", "update", "configmaps", "a", "13", 200, "OK", "14"),
	}
	shown := make(Trace, len(plain))
	for i, e := range plain {
		x := *e.Exchange
		shown[i] = Entry{Exchange: &x}
	}
	shown[1].Exchange.Shown = []Shown{{Event: "ADDED", Namespace: "rk-x-abcde", Name: "a", RV: "10", After: 2}, {Event: "MODIFIED", Name: "b", RV: "99", After: 4}}
	shown[2].Exchange.Shown = []Shown{{Namespace: "rk-x-abcde", Name: "a", RV: "10"}, {Name: "c", RV: "98"}}
	assert.Equal(t, shown.Normalize(), plain.Normalize())
	assert.Equal(t, Timeline(shown.Rows(), false), Timeline(plain.Rows(), false))
	assert.Equal(t, Mermaid(shown.Rows()), Mermaid(plain.Rows()))
	a, err := JSON(shown.Rows())
	assert.NilError(t, err)
	b, err := JSON(plain.Rows())
	assert.NilError(t, err)
	assert.Equal(t, a, b)

	rows := shown.Rows()
	assert.DeepEqual(t, rows[1].Shown, []Shown{
		{Event: "ADDED", Namespace: "rk-x-abcde", Name: "a", RV: "rv1", Rev: 10, After: 2},
		{Event: "MODIFIED", Name: "b", RV: "rv4", Rev: 99, After: 4},
	})
	assert.DeepEqual(t, rows[2].Shown, []Shown{{Namespace: "rk-x-abcde", Name: "a", RV: "rv1", Rev: 10}, {Name: "c", RV: "rv5", Rev: 98}})
	assert.Equal(t, rows[4].GotRV, "rv3", "the exchanges' symbols are rv1 (10), rv2 (13), rv3 (14), as without what reads showed")
}

// TestStatusReasonUnknown checks how a row renders an answer whose reason
// the recorder could not read: as unknown, with why, never as the HTTP
// status text.
func TestStatusReasonUnknown(t *testing.T) {
	x := exchange(1, "writer", "create", "configmaps", "c", "", 409, "", "")
	x.Exchange.ReasonUnknown = "body in application/yaml not decoded"
	tr := Trace{x}
	assert.Equal(t, tr.Rows()[0].Status(), "409 (reason unknown: body in application/yaml not decoded)")
	assert.Equal(t, tr.Normalize(), "1 writer create configmaps/c  -> 409 (reason unknown: body in application/yaml not decoded)\n")
}

func TestListAndWatchVersionsAreNoSymbols(t *testing.T) {
	tr := Trace{
		{Exchange: &Exchange{Seq: 1, Call: hooks.Call{Actor: "a", Verb: "create", Resource: "deployments", Name: "x"}, Code: 201, Reason: "Created", GotRV: "100"}},
		// The list's version may equal the create's, or not, depending
		// on what else the cluster wrote: it must not show.
		{Exchange: &Exchange{Seq: 2, Call: hooks.Call{Actor: "a", Verb: "list", Resource: "deployments"}, Code: 200, Reason: "OK", GotRV: "100"}},
		{Exchange: &Exchange{Seq: 3, Call: hooks.Call{Actor: "a", Verb: "list", Resource: "deployments"}, SentRV: "0", Code: 200, Reason: "OK", GotRV: "101"}},
		{Exchange: &Exchange{Seq: 4, Call: hooks.Call{Actor: "a", Verb: "watch", Resource: "deployments"}, SentRV: "100", Code: 200, Reason: "OK"}},
		{Exchange: &Exchange{Seq: 5, Call: hooks.Call{Actor: "a", Verb: "update", Resource: "deployments", Name: "x"}, SentRV: "100", Code: 200, Reason: "OK", GotRV: "102"}},
	}
	want := strings.Join([]string{
		"1 a create deployments/x          -> 201 Created rv1",
		"2 a list   deployments            -> 200 OK      rv*",
		"3 a list   deployments   sent 0   -> 200 OK      rv*",
		"4 a watch  deployments   sent rv* -> 200 OK",
		"5 a update deployments/x sent rv1 -> 200 OK      rv2",
	}, "\n") + "\n"
	assert.Equal(t, tr.Normalize(), want)
}
