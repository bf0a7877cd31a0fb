package explore

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/racekit/racekit/harness/language"
)

// commandsWith returns explore's commands, whose explorations run with s.
func commandsWith(s Settings) []*language.Command {
	cmds := slices.Clone(commands)
	explore := *cmds[0]
	explore.Run = func(sc *language.Scenario, inv language.Invocation) error { return runExplore(sc, inv, s) }
	cmds[0] = &explore
	return cmds
}

// commands are explore's commands; the explore line's Run is commandsWith's.
var commands = []*language.Command{
	{
		Name: "explore", Args: "[auto] [depth=N] [only=[ACTOR:]RESOURCE[/NAME[/SUB]]]... COMMAND ARGS...", Group: "race", MinArgs: 1, MaxArgs: -1,
		Summary: "explore the workload COMMAND under every interferer of the with lines that follow, at every moment of its calls",
		Detail:  "explore the workload COMMAND (a reconcile, a settle, a writer command, or a do of them and of waits for controllers that run on their own) under every interferer of the with lines that follow, at every moment of its calls: a learning run of the workload alone lists the moments (before each call is sent, after each answer), then each moment and interferer runs in a fresh namespace, as a subtest named by its moment, and the lines under the with lines must hold in every one; depth=2 tries pairs of moments; only= keeps the moments of calls on that resource, object or subresource, named as a trigger names it, by any actor, or with ACTOR: by ACTOR alone (only=rabbitmqclusters/r is the object, not its status; only=rabbitmq:rabbitmqclusters/r leaves out kcm's reads of it; several only= add up, and each must match a call of the workload); explore auto COMMAND ARGS... takes no with lines and no invariants: it restarts each operator that start or spawn ran at each of its own writes, and after the workload against a stale view of each resource it watches, holds back its watch across others' writes, and fails a run whose end state, create and delete counts or failures differ from the reference runs' (two, or three when they disagree) and from its neutral twin's (docs/explore.md, explore auto)",
	},
	{
		Name: "with", Args: "COMMAND ARGS...", Group: "race", MinArgs: 1, MaxArgs: -1,
		Summary: "name an interferer of the explore line above: a command that can run as a hook's action",
		Detail:  "name an interferer of the explore line above: a command that can run as a hook's action, such as annotate bob deployments/web team=blue; with every ... hooks it at every later call like the moment's too, a writer that keeps writing",
		Run: func(*language.Scenario, language.Invocation) error {
			return language.UsageError("a with line belongs right under an explore line")
		},
	},
	{
		Name: "explore-from", Group: "race", MinArgs: 0, MaxArgs: 0, Hidden: true,
		Summary: "note where the explore workload's calls start (the learning run's marker)",
		Run: func(sc *language.Scenario, _ language.Invocation) error {
			st := stateKey.Of(sc)
			st.mu.Lock()
			st.from = sc.Recorder().LastSeq()
			st.mu.Unlock()
			return nil
		},
	},
}

func runExplore(sc *language.Scenario, inv language.Invocation, s Settings) error {
	file, _, ok := strings.Cut(inv.Pos, ":")
	if !ok {
		return fmt.Errorf("explore cannot tell which file it is in (%q)", inv.Pos)
	}
	xo := Options{Parallel: s.Parallel, Auto: s.Auto, Shrink: s.Shrink}
	xo.Select, xo.Selected = momentsRun(sc.T())
	if s.Select != nil {
		xo.Select, xo.Selected = s.Select, s.Selected
	}
	// Each interleaving stops at its first failure, whatever the run
	// the explore line is in.
	opts := sc.Options()
	opts.Extensions = stopping(opts.Extensions)
	rep, err := Explore(sc.Context(), sc.ControlPlane(), opts, file, xo)
	if err != nil {
		return err
	}
	st := stateKey.Of(sc)
	st.mu.Lock()
	st.exploring, st.explored = true, rep
	st.mu.Unlock()
	if t := sc.T(); t != nil {
		for _, il := range rep.Interleavings {
			t.Run(il.Name, func(t testscript.T) {
				switch {
				case il.NotApplicable:
					t.Log("not applicable: " + il.NotApplicableWhy)
				case !il.Passed:
					t.Log(il.Log)
					t.Fatal("FAIL: " + il.Failure)
				}
			})
		}
	}
	failed := rep.Failed()
	fmt.Fprint(inv.Stdout, rep.Table())
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d interleavings failed:\n%s", len(failed), len(rep.Interleavings), rep.Table())
	}
	return nil
}

// momentsRun returns what go test -run and -skip select among the
// subtests an explore line runs, one per interleaving, so that
// -run 'TestScenarios/NAME/MOMENT$' runs that interleaving alone, not the
// whole exploration: each subtest's full name, t's name and its own,
// matched as package testing matches it (match.go). It returns nil
// when t is not a go test test or neither flag is set.
func momentsRun(t testscript.T) (func(string) bool, string) {
	named, ok := t.(interface{ Name() string })
	run, skip := testFlag("test.run"), testFlag("test.skip")
	if !ok || run == "" && skip == "" {
		return nil, ""
	}
	sel := testSelector(run, skip)
	var how []string
	if run != "" {
		how = append(how, "-run "+run)
	}
	if skip != "" {
		how = append(how, "-skip "+skip)
	}
	prefix := named.Name() + "/"
	return func(name string) bool { return sel(prefix + name) }, strings.Join(how, " ")
}

// testFlag returns the value of go test's flag called name, "" when it is
// not defined or not set.
func testFlag(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// Table renders the report: each interleaving's moment, interferer,
// outcome and 409s, after a line that says what was explored; then each
// moment left out as racing, with what it races with, so that no moment
// is left out unseen (the equivalent ones are the same as a moment the
// table lists).
func (r *Report) Table() string {
	var b strings.Builder
	workload := r.Workload
	if len(r.Only) > 0 {
		workload += " (only " + strings.Join(r.Only, ", ") + ")"
	}
	equivalent := fmt.Sprintf("%d equivalent left out", r.Equivalent)
	if len(r.Racing) > 0 {
		equivalent += fmt.Sprintf(", %d racing a controller that runs on its own", len(r.Racing))
	}
	if r.Selected != "" {
		fmt.Fprintf(&b, "explored %s, %s: %d moments (%s), %d of %d interleavings at depth %d, %d failed\n",
			workload, r.Selected, len(r.Moments), equivalent, len(r.Interleavings), r.Total, r.Depth, len(r.Failed()))
	} else if r.Shard != "" {
		fmt.Fprintf(&b, "explored %s, shard %s: %d moments (%s), %d of %d interleavings at depth %d, %d failed\n",
			workload, r.Shard, len(r.Moments), equivalent, len(r.Interleavings), r.Total, r.Depth, len(r.Failed()))
	} else {
		fmt.Fprintf(&b, "explored %s: %d moments (%s), %d interleavings at depth %d, %d failed\n",
			workload, len(r.Moments), equivalent, len(r.Interleavings), r.Depth, len(r.Failed()))
	}
	if a := r.Auto; a != nil {
		unsettled := ""
		if a.Unsettled > 0 {
			unsettled = fmt.Sprintf(", %d end-state differences of runs whose operator waits to retry after a 409", a.Unsettled)
		}
		if a.Shrunk > 0 {
			unsettled += fmt.Sprintf("; %d runs shrinking the findings", a.Shrunk)
		}
		if a.Echoed > 0 {
			unsettled = fmt.Sprintf(", %d differences of conditions that report a 409 the run met", a.Echoed) + unsettled
		}
		fmt.Fprintf(&b, "  auto: %d reference runs; %s; %d masked fields, %d differences the neutral twin showed too, %d flaky%s\n",
			a.References, autoPlans(a.Plans), len(a.Masked), a.Discarded, a.Flaky, unsettled)
		if len(a.Clock) > 0 {
			fmt.Fprintf(&b, "  auto: idle settled %s by a quiet period in %d runs: those verdicts lean on the clock; spawn it with metrics=$METRICS_ADDR (docs/running.md)\n",
				strings.Join(a.Clock, ", "), a.ClockRuns)
		}
	}
	for _, il := range r.Interleavings {
		var moment, interferer []string
		for _, h := range il.Hooks {
			moment = append(moment, h.Trigger())
			interferer = append(interferer, h.Interferer)
		}
		if il.Class != "" {
			if len(moment) == 0 {
				// A plan with no hook takes its fault before the
				// workload, or after it.
				moment = []string{"before the workload"}
			}
			interferer = []string{il.Fault}
		}
		outcome := "pass"
		switch {
		case il.Flaky:
			outcome = "flaky (a rerun did not show it again): " + strings.ReplaceAll(il.Failure, "\n", "\n      ")
		case il.NotApplicable:
			outcome = "n/a (" + il.NotApplicableWhy + ")"
		case !il.Passed:
			outcome = "FAIL " + strings.ReplaceAll(il.Failure, "\n", "\n      ")
		}
		fmt.Fprintf(&b, "  %-48s %-40s 409s %d  %s\n", strings.Join(moment, " + "), strings.Join(interferer, " + "), il.Conflicts, outcome)
	}
	for _, rc := range r.Racing {
		fmt.Fprintf(&b, "  %-48s %s\n", rc.Moment.Trigger(), rc.LeftOut())
	}
	return b.String()
}

// autoPlans renders the plans of an explore auto exploration by class.
func autoPlans(plans map[string]int) string {
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(plans)) {
		parts = append(parts, fmt.Sprintf("%d %s", plans[c], c))
	}
	if len(parts) == 0 {
		return "no plan"
	}
	return strings.Join(parts, ", ") + " plans"
}

// Explored returns what the scenario's explore line found, or nil when it
// has none (or it has not run).
func Explored(sc *language.Scenario) *Report {
	st := stateKey.Peek(sc)
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.explored
}

// Normalize renders r for comparing runs: the table, and each
// interleaving's normalized trace, moment by moment.
func (r *Report) Normalize() string {
	var b strings.Builder
	b.WriteString(r.Table())
	for _, il := range r.Interleavings {
		fmt.Fprintf(&b, "--- %s\n%s", il.Name, il.Trace.Normalize())
	}
	return b.String()
}
