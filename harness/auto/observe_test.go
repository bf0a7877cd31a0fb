package auto

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
)

// TestReadAtGenerated checks, over generated runs, that the oracle judges
// a run by what came before its end state was read and nothing after it.
// Each run is the references' creates and deletes, perhaps one more create
// (a difference the fault made), the read (reads of others and perhaps a
// hook firing while it reads), then anything: creates and deletes of
// objects and leader-election locks, other calls, and perhaps a hook
// firing (a plan's moment that came late). The history readAt returns must
// be that of the rows before the read ended, its late hooks those that
// fired once it began, and the verdict n/a when a hook was late or never
// fired (a generated failure, with the workload's wait failing or not),
// a failure when the run made the extra create before the read, and a
// pass otherwise: no call after the read is ever a finding.
func TestReadAtGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 32))
	objects := []string{"configmaps/a", "configmaps/op-leader-election", "secrets/b", "statefulsets/c"}
	actors := []string{"op", "admin", "kcm"}
	write := func() record.Row {
		verb, code := "create", 201
		if r.IntN(3) == 0 {
			verb, code = "delete", 200
		}
		if r.IntN(5) == 0 {
			code = 409
		}
		return record.Row{Actor: actors[r.IntN(len(actors))], Verb: verb, Object: objects[r.IntN(len(objects))], Code: code}
	}
	read := func() record.Row {
		return record.Row{Actor: actors[r.IntN(len(actors))], Verb: []string{"get", "list", "watch"}[r.IntN(3)], Object: objects[r.IntN(len(objects))], Code: 200}
	}
	other := func() record.Row {
		switch r.IntN(4) {
		case 0:
			return record.Row{Settled: &record.Settled{Name: "op", Actor: "op", By: record.SettledByWorkqueue}}
		case 1:
			return read()
		}
		return write()
	}
	hook := func(n int) record.Row {
		return record.Row{Hook: &record.HookFiring{ID: n, Trigger: fmt.Sprintf("before op update services/s %d", n), Action: "restart op"}}
	}
	end := State{Read: true, Resources: []string{"configmaps"}, Objects: map[string]map[string]string{"configmaps/a": {"data.v": `"1"`}}}
	var counts [3]int
	for n := range 3000 {
		var base []record.Row
		for range r.IntN(6) {
			base = append(base, write())
		}
		run := append([]record.Row(nil), base...)
		diff := r.IntN(3) == 0
		if diff {
			run = append(run, record.Row{Actor: "op", Verb: "create", Object: "statefulsets/extra", Code: 201})
		}
		before := append([]record.Row(nil), run...)
		from := len(run)
		// rows adds up to n rows, each a hook firing one time in odds,
		// else one of row's.
		var late []string
		rows := func(n, odds int, row func() record.Row) {
			for range r.IntN(n) {
				if r.IntN(odds) == 0 {
					h := hook(len(run))
					late = append(late, h.Hook.Trigger)
					run = append(run, h)
					continue
				}
				run = append(run, row())
			}
		}
		rows(3, 4, read)
		to := len(run)
		rows(8, 6, other)

		history, gotLate := readAt(run, from, to)
		assert.DeepEqual(t, history, HistoryOf(before))
		assert.DeepEqual(t, gotLate, late)

		ref := end
		ref.History = HistoryOf(base)
		st := end
		st.History, st.Late = history, gotLate
		o := newOracle([]State{ref, ref}, []explore.Interleaving{{}})
		// A hook that never fired (a window never closed), perhaps with
		// the workload's wait failing for it.
		var fails []language.Failure
		never := r.IntN(5) == 0
		if never {
			fails = append(fails, language.Failure{Kind: language.FailUnfired, Command: "release op statefulsets relist",
				Hook: &language.FailedHook{ID: 2, Trigger: "after kcm patch statefulsets/c 2nd", Armed: "x.txtar:9"}})
		}
		if never && r.IntN(2) == 0 {
			fails = append(fails, language.Failure{Kind: language.FailCommand, Command: "idle op", Message: "ran out of time"})
		}
		il := explore.Interleaving{Failures: fails}
		o.judge(&il, st, "g")
		switch {
		case len(late) > 0 || never:
			counts[0]++
			assert.Assert(t, il.NotApplicable && !il.Passed && il.Failure == "", "case %d: a hook fired after the read began, or never, want n/a: %+v", n, il)
		case diff:
			counts[1]++
			assert.Assert(t, !il.Passed && !il.NotApplicable && il.Failure != "", "case %d: a create before the read, want a failure: %+v", n, il)
		default:
			counts[2]++
			assert.Assert(t, il.Passed, "case %d: nothing before the read differs, want a pass: %v", n, il.Differences)
		}
	}
	// Each verdict is generated often enough to mean something.
	for i, c := range counts {
		assert.Assert(t, c > 300, "verdict %d generated %d times", i, c)
	}
}
