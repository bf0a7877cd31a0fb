package explore

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/racekit/racekit/harness/language"

	"github.com/racekit/racekit/harness/record"
)

// Refusal is an explore scenario refused for what it says, found once its
// learning run has run: an only= that names no resource the scenario
// knows, or that keeps no call of the workload, or a workload that makes
// no call. Pos is the file:line at fault, the explore line. racekit
// explore exits with status 2 for it, as for any file that is no explore
// scenario it can run (errors.As finds it).
type Refusal struct {
	Pos, Msg string
}

func (r *Refusal) Error() string { return r.Pos + ": " + r.Msg }

// Interleaving is the outcome of one run with hooks at their moments.
type Interleaving struct {
	// Index is the run's place among all of the exploration's runs, shards
	// or not: the order of the moments, then the interferers.
	Index int
	Name  string
	Hooks []Hook
	// Passed is true when every invariant held and every hook's action
	// did what it said. NotApplicable is set when the run is neither a
	// pass nor a finding, and NotApplicableWhy says why: a later hook's
	// moment never came (depth 2: an earlier interferer took the workload
	// down another path), or the interferer's own action failed (a
	// NotFound on a first reconcile) and no invariant did.
	Passed, NotApplicable bool
	NotApplicableWhy      string `json:",omitempty"`
	// Failure is the first failure that makes the run a finding, as the
	// table shows it (language.Failure.Summary): where, what, and the rules it
	// names.
	Failure string
	// Failures are everything that went wrong in the run, as values.
	Failures []language.Failure `json:",omitempty"`
	// Conflicts counts the 409 Conflict answers in the run.
	Conflicts int
	Log       string
	// Trace is the run's trace, and Script the scenario that ran: the
	// original, with the explore line replaced by the hooks and the
	// workload. Neither is in the JSON form.
	Trace  record.Trace `json:"-"`
	Script []byte       `json:"-"`

	// What an explore auto run adds (package auto), empty for any other:
	// Class is the kind of fault the run holds (intermediate, stale,
	// reference, twin), Fault the fault as the table shows it;
	// Differences what its masked end state, history and failures had
	// that the references' did not, and its neutral twin's did not
	// either; Flaky is set when a finding's rerun did not show it again
	// (the run is then no failure); Emit is the regression scenario
	// --emit writes for it, not in the JSON form.
	Class       string       `json:",omitempty"`
	Fault       string       `json:",omitempty"`
	Differences []Difference `json:",omitempty"`
	Flaky       bool         `json:",omitempty"`
	Emit        []byte       `json:"-"`
}

// Difference is one thing an explore auto run ended with that the
// reference runs did not, as data: a field of an object (Field a path
// such as spec.replicas), an object that is there in one and not the
// other (Field ""), a count of successful creates or deletes (Kind
// history, Field "create" or "delete" and the actor), or a failure the
// references did not have (Kind failure).
type Difference struct {
	Kind      string
	Object    string `json:",omitempty"`
	Field     string `json:",omitempty"`
	Reference string
	Run       string
}

// String renders d as the table shows it.
func (d Difference) String() string {
	switch d.Kind {
	case "failure":
		return fmt.Sprintf("failure: %s (the references: %s)", d.Run, d.Reference)
	case "history":
		return fmt.Sprintf("%s %s: %s in the references, %s here", d.Field, d.Object, d.Reference, d.Run)
	case "object":
		return fmt.Sprintf("%s: %s in the references, %s here", d.Object, d.Reference, d.Run)
	}
	return fmt.Sprintf("%s %s: %s in the references, %s here", d.Object, d.Field, d.Reference, d.Run)
}

// AutoSummary is what an explore auto exploration says beside its runs:
// how many reference runs it compared with, how many plans of each class
// it made, what it masked and why, and how many differences it set
// aside.
type AutoSummary struct {
	// References counts the reference runs (the workload with no fault).
	References int
	// Plans counts the plans run, by class.
	Plans map[string]int
	// BaseMask are the fields masked in every object whatever the runs
	// (docs/explore.md says why); Masked the fields masked because the
	// reference runs differed on them, as OBJECT FIELD; Unstable the
	// resources whose objects the reference runs did not agree on (a
	// generated name), whose objects only in a run are not compared.
	BaseMask []string
	Masked   []string `json:",omitempty"`
	Unstable []string `json:",omitempty"`
	// Runs counts every scenario the exploration ran: the learning run
	// and the other references, the plans and their neutral twins, and
	// the reruns that confirm the findings (not the shrinker's).
	Runs int `json:",omitempty"`
	// Shrunk counts the scenarios the shrinker ran (--emit): each
	// smaller scenario and its neutral twin.
	Shrunk int `json:",omitempty"`
	// Discarded counts the differences left out because the neutral
	// twin (the same fault with nothing stale) showed them too; Flaky
	// the findings that a rerun did not show again.
	Discarded int
	Flaky     int
	// Echoed counts the differences left out because they were a
	// condition whose message carried the API server's 409 Conflict
	// answer to the operator's own write in that run: the fault's echo
	// (a lagging view's writes are refused, and the operator says so),
	// not what the operator did of it (docs/explore.md, the oracle).
	Echoed int `json:",omitempty"`
	// Unsettled counts the end-state differences left out of runs that
	// ended with an operator's last write refused with 409 Conflict: it
	// waits to retry in a back-off that no signal shows, so its end state
	// is not its last word; what it created or deleted, and its failures,
	// still count.
	Unsettled int `json:",omitempty"`
	// Clock names the operators that idle settled by a quiet period in
	// some run (they offered no workqueue, exit or goroutines to read),
	// and ClockRuns counts those runs: where a plan waits for such an
	// operator, how far it got by then is a matter of the machine's
	// speed, so the verdict may change from run to run. Spawn it with
	// metrics=$METRICS_ADDR (docs/running.md).
	Clock     []string `json:",omitempty"`
	ClockRuns int      `json:",omitempty"`
	// Twins are the neutral twins' runs, by name: what each showed
	// against the references is what the plans of its group were not
	// judged on (Discarded), so a finding that a twin should have set
	// aside, or a pass it set aside too much for, can be read here.
	Twins []TwinRun `json:",omitempty"`
}

// TwinRun is one neutral twin's run as the oracle noted it.
type TwinRun struct {
	Name, Fault string
	// Group names the plans it is the twin of: "restart OP" for a
	// restart, "stale OP RESOURCE" for a restart against a view of
	// RESOURCE, or the unobserved plan it was made with.
	Group string
	// Read is false when the run ended before its end state was read.
	Read bool
	// Differences are what it showed against the references, failures
	// included.
	Differences []Difference `json:",omitempty"`
}

// InterfererFailed reports whether a hook's action of the run's own
// interferers failed; such a run is n/a unless an invariant failed too.
func (il Interleaving) InterfererFailed() bool {
	for _, f := range il.Failures {
		if f.Tolerated {
			return true
		}
	}
	return false
}

// judge sets il's outcome from its run's failures. A failure of anything
// but the interferers' own hooks makes it a finding. Otherwise it is n/a
// when, at depth 2, a hook's moment never came, or when an interferer's
// own action failed (it changed nothing the workload could trip on, and
// the invariants held); and a pass when nothing failed.
//
// At depth 1 a moment of an actor that runs on its own (onTheirOwn) may
// not come either: its calls come when its informers and timers make
// them, and a call the learning run saw (a lease renewed, a resync) need
// not recur; that run is n/a too.
func judge(il *Interleaving, passed bool, heads []int, onTheirOwn map[string]bool) {
	var own, unfired, other, unavailable []language.Failure
	for _, f := range il.Failures {
		_, line := language.SplitPos(hookArmed(f))
		switch {
		case f.Unavailable:
			unavailable = append(unavailable, f)
		case f.Tolerated:
			own = append(own, f)
		case f.Kind == language.FailUnfired && slices.Contains(heads, line):
			unfired = append(unfired, f)
		default:
			other = append(other, f)
		}
	}
	switch {
	case len(unavailable) > 0:
		// The run could not start as the scenario says (a fixed port
		// another racekit process held past the wait): it tried nothing.
		msg, _, _ := strings.Cut(unavailable[0].Text(), "\n")
		il.NotApplicable, il.NotApplicableWhy = true, "could not start: "+unavailable[0].Pos()+": "+msg
	case len(other) > 0:
		il.Failure = other[0].Summary()
	case len(unfired) > 0 && len(il.Hooks) > 1:
		il.NotApplicable, il.NotApplicableWhy = true, "a later moment never came"
	case len(unfired) > 0 && len(il.Hooks) == 1 && onTheirOwn[il.Hooks[0].Moment.Actor]:
		il.NotApplicable = true
		il.NotApplicableWhy = "the moment never came: " + il.Hooks[0].Moment.Actor + " runs on its own, and made no such call in this run"
	case len(unfired) > 0:
		il.Failure = unfired[0].Summary()
	case !passed:
		il.Failure = "the run failed outside racekit's commands (a testscript command of its own?): see its log"
	case len(own) > 0:
		msg, _, _ := strings.Cut(own[0].Message, "\n")
		il.NotApplicable, il.NotApplicableWhy = true, "interferer failed: "+msg
	default:
		il.Passed = true
	}
}

// hookArmed returns where f's hook was armed, or "".
func hookArmed(f language.Failure) string {
	if f.Hook == nil {
		return ""
	}
	return f.Hook.Armed
}

// Report is what Explore found.
type Report struct {
	// File, Script, Workload, Interferers, Invariants, Depth, Variant,
	// Exhaustive and the moments say which exploration this is: Merge
	// joins only reports that agree on every one of them.
	File string
	// Script is the SHA-256 of the scenario file's content, in hex.
	Script      string
	Workload    string
	Interferers []string
	Invariants  []string
	Depth       int
	// Only are the explore line's only= values: the resources and objects
	// whose calls' moments were explored; every call's when empty.
	Only []string `json:",omitempty"`
	// Variant is the teaching variant explored (racekit explore --bug),
	// "" for the production controller.
	Variant string `json:",omitempty"`
	// Exhaustive is set when no moment was left out as equivalent
	// (Options.Exhaustive).
	Exhaustive bool `json:",omitempty"`
	// Moments are the distinct moments of the learning run; Equivalent
	// counts those left out as equal to one of them, and LeftOut says
	// which, with the moment explored instead.
	Moments    []Moment
	Equivalent int
	LeftOut    []Equivalence `json:",omitempty"`
	// Racing are the moments left out because they race with a
	// controller that runs on its own, each with the watchers it races
	// with: after another actor's write, which a watcher's watch may
	// bring it before the hook there runs, or after.
	Racing []Race `json:",omitempty"`
	// Total counts the exploration's runs; Interleavings holds those this
	// report ran (all of them, or a shard's), in the order of the moments,
	// then interferers.
	Total         int
	Interleavings []Interleaving
	// Shard is "I/N" for a shard's report, "" for a whole one.
	Shard string `json:",omitempty"`
	// Selected says which runs were selected by name, such as "-run
	// after_controller_get", "" for all of them.
	Selected string `json:",omitempty"`
	// Learning is the learning run's trace from the workload's first call
	// on, as rows: the calls whose moments Moments lists, for drawing the
	// workload (Mermaid).
	Learning []record.Row `json:",omitempty"`
	// Auto is what an explore auto exploration adds (package auto); nil
	// for any other.
	Auto *AutoSummary `json:",omitempty"`
}

// Failed returns the interleavings whose invariants broke.
func (r *Report) Failed() []Interleaving {
	var out []Interleaving
	for _, il := range r.Interleavings {
		if !il.Passed && !il.NotApplicable {
			out = append(out, il)
		}
	}
	return out
}

// identity lists what makes r the exploration it is, field by field, for
// Merge to compare: each a name and its value, rendered.
func (r *Report) identity() [][2]string {
	or := func(s, none string) string {
		if s == "" {
			return none
		}
		return s
	}
	var ms []string
	for _, m := range r.Moments {
		ms = append(ms, m.Trigger())
	}
	var eq, racing []string
	for _, e := range r.LeftOut {
		eq = append(eq, e.Moment.Trigger()+" = "+e.Twin.Trigger())
	}
	for _, rc := range r.Racing {
		racing = append(racing, rc.Moment.Trigger()+" ("+rc.LeftOut()+")")
	}
	return [][2]string{
		{"file", filepath.Base(r.File)},
		{"script (SHA-256)", or(r.Script, "none")},
		{"workload", r.Workload},
		{"interferers", strings.Join(r.Interferers, "; ")},
		{"invariants", strings.Join(r.Invariants, "; ")},
		{"depth", strconv.Itoa(r.Depth)},
		{"only", or(strings.Join(r.Only, ", "), "every call")},
		{"teaching variant", or(r.Variant, "none (the production controller)")},
		{"pruning", map[bool]string{false: "equivalent moments left out", true: "every moment (exhaustive)"}[r.Exhaustive]},
		{"moments", strings.Join(ms, "; ")},
		{"equivalent moments", or(strings.Join(eq, "; "), "none")},
		{"racing moments", or(strings.Join(racing, "; "), "none")},
		{"runs", strconv.Itoa(r.Total)},
	}
}

// sameExploration returns nil when a and b are reports of one exploration,
// or an error naming each thing that differs.
func sameExploration(a, b *Report) error {
	if b.Script == "" {
		return fmt.Errorf("shard %s names no script: it is no report of this racekit's explore --json (run the shard again)", orWhole(b.Shard))
	}
	ia, ib := a.identity(), b.identity()
	var diffs []string
	for i := range ia {
		if ia[i][1] != ib[i][1] {
			diffs = append(diffs, fmt.Sprintf("%s: %s, not %s", ia[i][0], ib[i][1], ia[i][1]))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("shard %s is of another exploration than shard %s:\n  %s", orWhole(b.Shard), orWhole(a.Shard), strings.Join(diffs, "\n  "))
}

// Merge joins the reports of an exploration's shards into the report of
// the whole: each run once, in order. The shards must come from one
// exploration (the same script, by content, interferers, invariants,
// depth, teaching variant, pruning and moments) and cover every run
// exactly once.
func Merge(shards ...*Report) (*Report, error) {
	if len(shards) == 0 {
		return nil, errors.New("merge: no report")
	}
	first := shards[0]
	if first.Script == "" {
		return nil, fmt.Errorf("merge: shard %s names no script: it is no report of this racekit's explore --json (run the shard again)", orWhole(first.Shard))
	}
	out := &Report{File: first.File, Script: first.Script, Workload: first.Workload, Interferers: first.Interferers, Invariants: first.Invariants,
		Depth: first.Depth, Only: first.Only, Racing: first.Racing, Variant: first.Variant, Exhaustive: first.Exhaustive, Moments: first.Moments, Equivalent: first.Equivalent, LeftOut: first.LeftOut, Total: first.Total, Auto: first.Auto}
	seen := map[int]string{}
	for _, r := range shards {
		if err := sameExploration(first, r); err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		for _, il := range r.Interleavings {
			if prev, dup := seen[il.Index]; dup {
				return nil, fmt.Errorf("merge: run %s is in shard %s and in shard %s", il.Name, prev, orWhole(r.Shard))
			}
			seen[il.Index] = orWhole(r.Shard)
			out.Interleavings = append(out.Interleavings, il)
		}
	}
	if len(out.Interleavings) != out.Total {
		var missing []string
		for i := 0; i < out.Total; i++ {
			if _, ok := seen[i]; !ok {
				missing = append(missing, strconv.Itoa(i))
			}
		}
		return nil, fmt.Errorf("merge: the shards ran %d of %d runs; missing: %s", len(out.Interleavings), out.Total, strings.Join(missing, ", "))
	}
	sort.Slice(out.Interleavings, func(i, j int) bool { return out.Interleavings[i].Index < out.Interleavings[j].Index })
	return out, nil
}

func orWhole(shard string) string {
	if shard == "" {
		return "(whole)"
	}
	return shard
}

// uniqueNames returns an error naming two runs of names that have one name:
// each run's subtest, --emit file and shard hash need their own.
func uniqueNames(names []string) error {
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return fmt.Errorf("two runs are called %s: make the with lines differ", n)
		}
		seen[n] = true
	}
	return nil
}
