package explore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/racekit/racekit/harness/controlplane"
	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/harness/running"
)

// What explore offers the layer above it that runs explore auto lines
// (package auto): the parsed scenario, its learning run, and runs of
// plans made elsewhere, each an Interleaving of an ordinary Report. Explore
// knows nothing of how the plans are made or judged.

// ErrNoAuto is returned, wrapped, when an explore auto line is explored
// by a racekit whose layers above explore did not say how (Options.Auto).
var ErrNoAuto = errors.New("explore auto is not available here")

// AutoFunc explores an explore auto scenario: package auto's planner and
// oracle, which the façade gives explore (Options.Auto, Settings.Auto).
type AutoFunc func(ctx context.Context, cp *controlplane.ControlPlane, opts language.Options, a *Auto, xo Options) (*Report, error)

// Auto is an explore auto scenario, parsed: the setup lines, the workload,
// and nothing after (parseExploration refuses with lines and invariants).
type Auto struct {
	e *exploration
}

// ParseAuto reads the explore scenario in file and returns it when its
// explore line is an explore auto one, nil when it is another; an error
// names file:line as Check does.
func ParseAuto(opts language.Options, file string) (*Auto, error) {
	cmds, err := language.Table(opts.Extensions, opts.Commands)
	if err != nil {
		return nil, err
	}
	e, err := parseExploration(file, cmds)
	if err != nil {
		return nil, err
	}
	if !e.auto {
		return nil, nil
	}
	return &Auto{e: e}, nil
}

// File is the scenario's file, as given.
func (a *Auto) File() string { return a.e.file }

// Workload is the explore auto line's command, as written after "auto".
func (a *Auto) Workload() string { return a.e.workload }

// Line is the explore line's number, from 1.
func (a *Auto) Line() int { return a.e.at + 1 }

// Pos is the explore line as file:line.
func (a *Auto) Pos() string { return fmt.Sprintf("%s:%d", filepath.Base(a.e.file), a.e.at+1) }

// ArchiveFile returns the archive's file called name, as a create of it
// reads it, and whether there is one.
func (a *Auto) ArchiveFile(name string) ([]byte, bool) {
	for _, f := range a.e.ar.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

// Only are the explore line's only= values.
func (a *Auto) Only() []string { return a.e.only }

// Line of a script: its number, from 1, and its text.
type Line struct {
	N    int
	Text string
}

// Setup returns the commands before the explore line, each with its
// number: the setup every run starts with.
func (a *Auto) Setup() []Line {
	var out []Line
	for i, l := range a.e.lines[:a.e.at] {
		if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			out = append(out, Line{i + 1, strings.TrimSpace(l)})
		}
	}
	return out
}

// Prelude sets the lines every run of the exploration runs between the
// setup and the workload, before its hooks are armed and before the
// learning run counts the workload's calls: package auto settles every
// operator there. A setup ends when its last line does, not when the
// operator it started has done what that line began (phase 1's await of
// one create leaves the operator reconciling the rest), and a run whose
// workload starts while the operator is still busy counts the operator's
// leftover calls among the workload's: "the 1st update of the cluster"
// is a leftover in one run and the finalizer's removal in the next, and
// a hook there, or a mark, lands at another moment from run to run.
func (a *Auto) Prelude(lines []string) { a.e.pre = slices.Clone(lines) }

// learningHeads returns the lines the learning run runs between the setup
// and the workload: the prelude, then explore-from, from which on it
// counts the workload's calls.
func (e *exploration) learningHeads() []string {
	return append(slices.Clone(e.pre), "explore-from")
}

// WorkloadLine returns the 1-based line of the workload in a script with
// heads lines before it (Script), so that a failure's line says whether
// it is the workload's.
func (a *Auto) WorkloadLine(heads int) int { return a.e.at + 2 + len(a.e.pre) + heads }

// WithWorkload returns a with workload in place of its workload, or a
// itself when workload is empty (Plan.Workload).
func (a *Auto) WithWorkload(workload string) *Auto {
	if workload == "" {
		return a
	}
	e := *a.e
	e.workload = workload
	return &Auto{e: &e}
}

// Without returns a with the setup lines numbered ns (Setup's N) left
// out of its script, so that package auto can try a smaller regression
// scenario; numbers at or after the explore line are ignored.
func (a *Auto) Without(ns []int) *Auto {
	e := *a.e
	e.lines = nil
	for i, l := range a.e.lines {
		if i < a.e.at && slices.Contains(ns, i+1) {
			e.at--
			continue
		}
		e.lines = append(e.lines, l)
	}
	return &Auto{e: &e}
}

// Script returns the scenario with the explore line replaced by the
// prelude, heads, the workload and tail, each on a line of its own, as a
// run of a plan runs it.
func (a *Auto) Script(heads, tail []string) []byte {
	e := *a.e
	e.tail = tail
	// Always one line after another from the explore line on, so that
	// WorkloadLine holds whatever the number of heads.
	lines := append([]string{"# explore auto: " + a.e.workload}, a.e.pre...)
	return e.script(append(lines, heads...), false)
}

// Learned is what an explore auto's learning run showed: every moment of
// the workload's calls, which of them explore explores (the equivalence
// and racing rules of moments), and the trace and lives they come from.
type Learned struct {
	// Moments are every moment of the workload's calls, in order: before
	// and after each call. Seq is the sequence number of each one's call
	// in Trace, Kept whether explore would explore it (its own twin,
	// racing nothing), and Racing, for one left out as racing, whom it
	// races with.
	Moments []Moment
	Seq     []int
	Kept    []bool
	Racing  [][]Watcher
	// Trace is the learning run's trace, From the last sequence number
	// before the workload's calls, and Lives what ran on its own in it.
	Trace record.Trace
	From  int
	Lives []running.Life
	l     learned
}

// Learn runs the learning run: the setup, the workload alone and tail
// (the lines package auto settles and reads the end state with); done,
// if set, is called with the run's scenario when its script ends. It
// fails as explore's learning run does when the run fails.
func (a *Auto) Learn(ctx context.Context, cp *controlplane.ControlPlane, opts language.Options, dir string, tail []string, done func(*language.Scenario), xo Options) (*Learned, error) {
	e := *a.e
	e.tail, e.learnDone = tail, done
	xo.stage(StageLearning, 1)
	l, err := learn(ctx, cp, opts, &e, dir)
	if err != nil {
		return nil, err
	}
	a.e.onTheirOwn = e.onTheirOwn
	if xo.Exhaustive {
		l.exhaustive()
	}
	out := &Learned{Moments: l.all, Seq: l.seq, Racing: l.racing, Trace: l.trace, From: l.from, Lives: l.lives, l: l}
	for i := range l.all {
		out.Kept = append(out.Kept, l.twin[i] == i && l.racing[i] == nil)
	}
	return out, nil
}

// Report returns the report of an explore auto exploration so far: what
// was explored (its identity, for Merge: the file, its SHA-256, the
// workload, "auto" as its one interferer, the moments), with no run yet.
func (a *Auto) Report(l *Learned, xo Options) *Report {
	sum := sha256.Sum256(a.e.content)
	rep := &Report{File: a.e.file, Script: hex.EncodeToString(sum[:]), Workload: "auto " + a.e.workload, Interferers: []string{"auto"},
		Depth: 1, Only: a.e.only, Variant: xo.Variant, Exhaustive: xo.Exhaustive}
	rep.Moments, rep.LeftOut, rep.Racing = l.l.kept()
	rep.Equivalent = len(rep.LeftOut)
	rep.Learning = l.l.rows
	if xo.Shard.N > 0 {
		rep.Shard = fmt.Sprintf("%d/%d", xo.Shard.I, xo.Shard.N)
	}
	return rep
}

// Plan is one run of an explore auto exploration, as package auto makes
// it: hooks armed at moments, other lines before the workload (a mark),
// and lines after it; Done is called with the run's scenario when its
// script ends. Workload, when set, is the workload as this run runs it
// instead of the scenario's (an unobserved plan leaves out the waits for
// the operator whose watch it holds, which could only wait for what the
// hold hides).
type Plan struct {
	// Index is the plan's place among all of the exploration's runs;
	// Name its unique name (its subtest, --emit file and shard hash);
	// Class what kind of fault it holds (Interleaving.Class); Fault the
	// fault as the table's interferer column shows it.
	Index        int
	Name         string
	Class, Fault string
	Hooks        []Hook
	Heads, Tail  []string
	Workload     string
	Done         func(*language.Scenario)
	// Then, if set, is called with the run's interleaving once the run
	// has ended and given back its slot, before Run returns: package
	// auto judges a plan there, and starts its confirming rerun while
	// the other plans still run.
	Then func(Interleaving)
}

// Run runs plans, at most xo.Parallel at a time (DefaultParallel when 0;
// xo.Slots' when set), each in a namespace and a folder of its own under
// dir, and returns their interleavings in plans' order, judged as explore
// judges a run: package auto judges them again by its oracle.
//
// what names the stage the plans are (Options.Stage); "" announces no
// stage and counts no progress, for runs that go on inside another.
func (a *Auto) Run(ctx context.Context, cp *controlplane.ControlPlane, opts language.Options, dir, what string, plans []Plan, xo Options) []Interleaving {
	progress := xo.Progress
	if what == "" {
		progress = nil
	} else {
		xo.stage(what, len(plans))
	}
	todo := make([]run, len(plans))
	for i := range plans {
		todo[i] = run{index: plans[i].Index, plan: &plans[i]}
	}
	return runAll(ctx, cp, opts, a.e, dir, todo, xo.slots(), progress)
}

// TempDir makes the folder an exploration's runs live in, removed by the
// returned function and when cp is interrupted.
func TempDir(cp *controlplane.ControlPlane) (string, func(), error) {
	dir, err := os.MkdirTemp("", "racekit-explore-")
	if err != nil {
		return "", nil, err
	}
	cp.OnInterrupt(func() { os.RemoveAll(dir) })
	return dir, func() { os.RemoveAll(dir) }, nil
}

// runPlan runs one plan of an explore auto exploration.
func runPlan(ctx context.Context, cp *controlplane.ControlPlane, opts language.Options, e *exploration, dir string, p Plan) Interleaving {
	il := Interleaving{Hooks: p.Hooks, Name: p.Name, Class: p.Class, Fault: p.Fault}
	var heads []string
	for _, h := range p.Hooks {
		heads = append(heads, h.Line())
	}
	heads = append(heads, p.Heads...)
	a := (&Auto{e: e}).WithWorkload(p.Workload)
	il.Script = a.Script(heads, p.Tail)
	opts.Done = p.Done
	// The hooks are the lines right under the explore line's comment
	// and the prelude.
	var lines []int
	for i := range p.Hooks {
		lines = append(lines, a.WorkloadLine(0)+i)
	}
	opts.Extensions = append(slices.Clip(opts.Extensions), interferers(lines))
	res := language.RunScript(ctx, cp, opts, dir, e.file, il.Script)
	il.Log, il.Trace, il.Failures = res.Log, res.Trace, res.Failures
	for _, x := range res.Trace.Own() {
		if record.IsConflict(x.Code, x.Reason) {
			il.Conflicts++
		}
	}
	judge(&il, res.Passed, lines, e.onTheirOwn)
	return il
}
