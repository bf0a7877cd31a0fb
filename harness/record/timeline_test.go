package record

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/hooks"
	"github.com/racekit/racekit/internal/mermaid"
)

// sampleRows cover what a timeline and a diagram must render: a create with
// a uid, a refusal, a transport error, a registry call, hook firings whose
// text holds the characters Mermaid gives a meaning to, and changes of a
// view: a mark over the API server, a hold of an actor who has made no call
// yet, a list asked for as of a resourceVersion.
func sampleRows() []Row {
	return Trace{
		exchange(1, "setup", "create", "webapps", "web", "", 201, "Created", "10"),
		{View: &ViewChange{Change: ViewMark, Name: "before"}},
		{View: &ViewChange{Change: ViewHold, Actor: "carol", Resource: "deployments", At: "before"}},
		{View: &ViewChange{Change: ViewList, Actor: "carol", Resource: "deployments", At: "10"}},
		exchange(2, "controller", "get", "deployments", "web", "", 200, "OK", "11"),
		{Hook: &HookFiring{ID: 1, Trigger: "after controller get deployments/web 1st", Action: `patch bob deployments/web merge '{"a":1};#x:y'`, Caller: "controller"}},
		exchange(3, "bob", "patch", "deployments", "web", "", 200, "OK", "12"),
		exchange(4, "controller", "update", "deployments", "web", "11", 409, "Conflict", ""),
		exchange(5, "controller", "create", "registrations", "web", "", 201, "Created", ""),
		{Exchange: &Exchange{Seq: 6, Err: "connection refused"}},
	}.Rows()
}

func TestTimeline(t *testing.T) {
	got := Timeline(sampleRows(), false)
	want := `#  ACTOR       CALL                      SENT  GOT  STATUS
1  setup       create webapps/web              rv1  201 Created
   ⤷ view: mark before
   ⤷ view: hold carol deployments at=before
   ⤷ view: carol's list of deployments is sent as of rv* (resourceVersionMatch=Exact)
2  controller  get deployments/web             rv2  200 OK
   ⤷ hook 1 (after controller get deployments/web 1st): patch bob deployments/web merge '{"a":1};#x:y'
3  bob         patch deployments/web           rv3  200 OK
4  controller  update deployments/web    rv2        409 Conflict
5  controller  create registrations/web             201 Created
6                                                   error
`
	assert.Equal(t, got, want)
	colored := Timeline(sampleRows(), true)
	assert.Assert(t, strings.Contains(colored, "\x1b["), "color must color")
	plain := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(colored, "")
	assert.Equal(t, plain, want, "color must not change the text")
}

// TestMermaidNoteOverCaller checks that a hook's note sits over the actor
// whose call fired it, not over whoever called last.
func TestMermaidNoteOverCaller(t *testing.T) {
	rows := Trace{
		exchange(1, "controller", "get", "deployments", "web", "", 200, "OK", "1"),
		{Hook: &HookFiring{ID: 1, Trigger: "after controller get deployments/web 1st", Action: "get alice deployments/web s", Caller: "controller"}},
		exchange(2, "alice", "get", "deployments", "web", "", 200, "OK", "1"),
		{Hook: &HookFiring{ID: 2, Trigger: "after controller get deployments/web 1st", Action: "annotate bob deployments/web a=b", Caller: "controller"}},
	}.Rows()
	m := Mermaid(rows)
	assert.Assert(t, strings.Contains(m, "Note over controller: hook 1"), "%s", m)
	assert.Assert(t, strings.Contains(m, "Note over controller: hook 2"), "%s", m)
}

func TestJSON(t *testing.T) {
	out, err := JSON(sampleRows())
	assert.NilError(t, err)
	var rows []Row
	assert.NilError(t, json.Unmarshal([]byte(out), &rows))
	// The referee's fields stay out of it, as out of every rendering.
	want := sampleRows()
	for i := range want {
		want[i].Namespace, want[i].SentRev, want[i].GotRev, want[i].NoReason, want[i].Shown = "", 0, 0, false, nil
	}
	assert.DeepEqual(t, rows, want)
	assert.Assert(t, !strings.Contains(out, "rk-x-abcde"), "the JSON shows a namespace:\n%s", out)
}

// TestMermaidParses checks the diagrams racekit draws, and every diagram in
// the docs, with the real Mermaid parser (make mermaid installs it from npm).
func TestMermaidParses(t *testing.T) {
	files := []string{filepath.Join(t.TempDir(), "sample.mmd")}
	assert.NilError(t, os.WriteFile(files[0], []byte(Mermaid(sampleRows())), 0o644))
	docs, err := filepath.Glob("../../docs/*/*.md")
	assert.NilError(t, err)
	more, err := filepath.Glob("../../docs/*.md")
	assert.NilError(t, err)
	for i, doc := range append(append(docs, more...), "../../README.md") {
		data, err := os.ReadFile(doc)
		assert.NilError(t, err)
		for j, m := range regexp.MustCompile("(?s)```mermaid\n(.*?)```").FindAllStringSubmatch(string(data), -1) {
			f := filepath.Join(t.TempDir(), strings.NewReplacer("/", "_", ".", "_").Replace(doc)+"-"+string(rune('a'+i))+string(rune('a'+j))+".mmd")
			assert.NilError(t, os.WriteFile(f, []byte(m[1]), 0o644))
			files = append(files, f)
		}
	}
	out, err := mermaid.Check("../..", files...)
	assert.NilError(t, err)
	assert.Equal(t, strings.Count(out, ": ok ("), len(files), "%s", out)
}

// TestMermaidCheckCanFail makes sure the parser check rejects a broken
// diagram, so that TestMermaidParses means something.
func TestMermaidCheckCanFail(t *testing.T) {
	f := filepath.Join(t.TempDir(), "bad.mmd")
	assert.NilError(t, os.WriteFile(f, []byte("sequenceDiagram\n    a->>b: x; y\n    a-x>b: bad\n"), 0o644))
	out, err := mermaid.Check("../..", f)
	assert.Assert(t, err != nil, "a broken diagram parsed:\n%s", out)
	assert.Assert(t, strings.Contains(out, "Parse error"), "%s", out)
}

// TestTimelineFolds checks the fold of background reads: an actor whose
// lists and watches span more than FoldAt resources has them and its
// discovery folded into one line where the first was, except the reads of
// a resource whose view the scenario changed; its other calls, a refused
// list, and an actor under the limit stay row by row; TimelineUnfolded
// shows each.
func TestTimelineFolds(t *testing.T) {
	list := func(seq int, actor, res string, code int) Entry {
		e := exchange(seq, actor, "list", res, "", "", code, "", "5")
		return e
	}
	cases := []struct {
		name      string
		resources int
		want      []string
		wantNot   []string
	}{
		// secrets is one more resource.
		{"at the limit", FoldAt - 1, []string{"kcm list r19", "kcm get /apis"}, []string{"folded"}},
		{"over the limit", FoldAt, []string{
			"⤷ kcm's background reads folded, here and after: 20 lists and 19 watches of 20 resources, 1 discovery reads",
			"kcm create configmaps/c", // not a read
			"kcm list secrets",        // the view changed: kept
			"kcm list pods",           // refused: stands out
			"op list r1",              // another actor, under the limit
		}, []string{"kcm list r1 ", "kcm watch r2", "kcm get /apis"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := Trace{{Exchange: &Exchange{Seq: 1, Call: hooks.Call{Actor: "kcm", Verb: "get", Path: "/apis"}, Code: 200}}}
			seq := 2
			for i := 1; i <= c.resources; i++ {
				res := "r" + strconv.Itoa(i)
				tr = append(tr, list(seq, "kcm", res, 200))
				if i > 1 {
					tr = append(tr, exchange(seq+1, "kcm", "watch", res, "", "", 200, "", "5"))
				}
				seq += 2
			}
			tr = append(tr, Entry{View: &ViewChange{Change: ViewHold, Actor: "kcm", Resource: "secrets"}},
				list(seq, "kcm", "secrets", 200), list(seq+1, "kcm", "pods", 403),
				exchange(seq+2, "kcm", "create", "configmaps", "c", "", 201, "Created", "6"),
				list(seq+3, "op", "r1", 200))
			// Columns are padded: compared with single spaces.
			got := strings.Join(strings.Fields(strings.ReplaceAll(Timeline(tr.Rows(), false), "\n", " ¶ ")), " ")
			for _, w := range c.want {
				assert.Assert(t, strings.Contains(got, w), "want %q in:\n%s", w, got)
			}
			for _, w := range c.wantNot {
				assert.Assert(t, !strings.Contains(got, w), "want no %q in:\n%s", w, got)
			}
			m, mAll := Mermaid(tr.Rows()), MermaidUnfolded(tr.Rows())
			assert.Equal(t, strings.Contains(m, "Note over kcm: kcm's background reads folded"), c.resources >= FoldAt, "%s", m)
			assert.Equal(t, strings.Count(m, "kcm->>") < strings.Count(mAll, "kcm->>"), c.resources >= FoldAt, "%s", m)
			assert.Assert(t, strings.Contains(m, "kcm->>kube_apiserver: 44. create configmaps/c") || c.resources < FoldAt, "%s", m)
			all := TimelineUnfolded(tr.Rows(), false)
			assert.Assert(t, !strings.Contains(all, "folded"), "%s", all)
			assert.Equal(t, strings.Count(all, "\n"), len(tr)+1, "every entry on a line and the header")
		})
	}
}
