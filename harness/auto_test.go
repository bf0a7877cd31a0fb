package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/auto"
	"github.com/racekit/racekit/harness/explore"
)

// exploreAuto explores the auto script file with xo on the test's control
// plane and the controllers of the controller scripts.
func exploreAuto(t *testing.T, file string, xo ExploreOptions) *ExploreReport {
	t.Helper()
	opts := ScriptOptions{Controllers: append(testControllers(), runningControllers()...)}
	rep, err := Explore(context.Background(), controlPlane(t), opts, file, xo)
	assert.NilError(t, err)
	assert.Assert(t, rep.Auto != nil, "%s explored nothing auto", file)
	return rep
}

// findings returns the differences of rep's failed runs, one line each,
// sorted, with the run's moment and fault.
func findings(rep *ExploreReport) []string {
	var out []string
	for _, il := range rep.Failed() {
		for _, d := range il.Differences {
			out = append(out, il.Fault+" at "+il.Name+": "+d.String())
		}
	}
	sort.Strings(out)
	return out
}

// TestAutoNullPlans explores the mover, the safe mover, the sizer and the
// follower auto with the plans whose fault cannot matter (a mark with no
// restart at each moment): not one of them may be a finding, and the
// mover's and the sizer's real findings (intermediate, unobserved) must
// stay. An oracle that called a run's own noise a difference would fail
// here first.
//
// The mover and the sizer are then explored again with the moments
// explore's equivalence leaves out (Exhaustive), and the findings must be
// the same, by fault and difference, once each plan is named by its
// fault's place in the table: that pruning is sound. The null plans'
// exploration is the pruned side, since a null plan is never a finding;
// each file is explored twice, not three times.
func TestAutoNullPlans(t *testing.T) {
	for _, tc := range []struct {
		file  string
		found bool // whether the file's controller has a bug auto finds; its pruning is checked
	}{
		{"auto/testdata/auto_mover.txtar", true},
		{"auto/testdata/auto_mover_safe.txtar", false},
		{"auto/testdata/auto_sizer.txtar", true},
		{"auto/testdata/auto_sizer_follow.txtar", false},
	} {
		t.Run(strings.TrimSuffix(tc.file[strings.LastIndex(tc.file, "/")+1:], ".txtar"), func(t *testing.T) {
			rep := exploreAuto(t, tc.file, ExploreOptions{AutoNull: true})
			nulls := 0
			for _, il := range rep.Interleavings {
				if il.Class != auto.ClassNull {
					continue
				}
				nulls++
				assert.Assert(t, il.Passed || il.NotApplicable, "null plan %s is a finding: %s", il.Name, il.Failure)
			}
			assert.Assert(t, nulls > 0, "no null plan ran:\n%s", rep.Table())
			if !tc.found {
				assert.DeepEqual(t, findings(rep), []string(nil))
				return
			}
			assert.Assert(t, len(findings(rep)) > 0, "the controller's bug is not found:\n%s", rep.Table())
			t.Run("pruning", func(t *testing.T) {
				autoPruningIsSound(t, tc.file, rep)
			})
		})
	}
}

// autoPruningIsSound checks that pruned, an exploration of the auto
// script file with explore's equivalence, finds what one without it
// finds.
func autoPruningIsSound(t *testing.T, file string, pruned *ExploreReport) {
	all := exploreAuto(t, file, ExploreOptions{Exhaustive: true})
	// Each difference once, whatever run showed it: the exhaustive
	// exploration has more runs, each equivalent to one of the pruned.
	distinct := func(rep *explore.Report) []string {
		seen := map[string]bool{}
		var out []string
		for _, il := range rep.Failed() {
			for _, d := range il.Differences {
				k := il.Class + ": " + d.String()
				if !seen[k] {
					seen[k] = true
					out = append(out, k)
				}
			}
		}
		sort.Strings(out)
		return out
	}
	assert.Assert(t, len(distinct(pruned)) > 0, "nothing found:\n%s", pruned.Table())
	if d := cmp.Diff(distinct(pruned), distinct(all)); d != "" {
		t.Errorf("pruning changed the findings (-pruned +exhaustive):\n%s\npruned:\n%s\nexhaustive:\n%s", d, pruned.Table(), all.Table())
	}
}

// TestAutoReference explores testdata/auto/webapp_scale.txtar auto: the
// reference controller running on its own, as its production main runs
// it, over a workload of two scales and another writer's annotation.
// No plan may fail, and none may be n/a but for a moment that did not
// come again (how many reconciles the workqueue coalesces varies, and so
// does the number of the controller's registry calls): the production controller
// reads live, retries conflicts from a fresh read and confirms status for
// the generation it read, so no restart, stale view or hidden state
// changes where it ends. An oracle that called a fault's own noise a
// difference would fail here. (TestAutoFinalizerVariant runs a teaching
// variant on its own.)
func TestAutoReference(t *testing.T) {
	c := controlPlane(t)
	rep, err := Explore(context.Background(), c, refOptions(t, c, ""), "../testdata/auto/webapp_scale.txtar", ExploreOptions{})
	assert.NilError(t, err)
	assert.Assert(t, rep.Auto != nil, "explored nothing auto")
	classes := map[string]int{}
	for _, il := range rep.Interleavings {
		assert.Assert(t, !il.NotApplicable || strings.HasPrefix(il.NotApplicableWhy, "the moment never came"), "plan %s is n/a: %s\n%s", il.Name, il.NotApplicableWhy, rep.Table())
		classes[il.Class]++
	}
	for _, class := range []string{auto.ClassIntermediate, auto.ClassStale, auto.ClassUnobserved} {
		assert.Assert(t, classes[class] > 0, "no %s plan ran:\n%s", class, rep.Table())
	}
	assert.DeepEqual(t, findings(rep), []string(nil))
}

// TestAutoNeverSettles explores auto an operator that never stops
// calling (busy, which lists its ConfigMaps in a loop): its learning run
// cannot settle it, and the exploration fails at once, at the explore
// line, saying how long it waited and what was still moving, with nothing
// explored and nothing left running.
func TestAutoNeverSettles(t *testing.T) {
	file := filepath.Join(t.TempDir(), "never.txtar")
	assert.NilError(t, os.WriteFile(file, []byte(`# busy never settles
create cm.yaml
start busy
await controller list configmaps 200
explore auto do annotate alice configmaps/c k=v

-- cm.yaml --
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
`), 0o644))
	opts := ScriptOptions{Controllers: append(testControllers(), runningControllers()...), WaitTimeout: time.Second}
	_, err := Explore(context.Background(), controlPlane(t), opts, file, ExploreOptions{})
	assert.ErrorContains(t, err, "never.txtar:5")
	for _, want := range []string{"ran out of time", "busy was still busy after 1s", "list configmaps"} {
		assert.ErrorContains(t, err, want)
	}
}

// TestAutoFinalizerVariant explores testdata/auto/webapp_delete.txtar (the
// user deletes the WebApp) auto against the production reference
// controller, running on its own, and against the teaching variant
// finalizer-before-cleanup, which removes its finalizer before it
// deregisters. The production controller fails no plan; the variant
// fails exactly one, the restart between its finalizer's removal and its
// deregistration, which the history shows as the registry's delete the
// references made and the run did not (a call outside the API server,
// compared by whether it was made: auto.HistoryOf). The regression
// scenario emitted for it must fail against the variant at that claim
// and pass against the production controller. (The other variants break
// rules of conflict handling, which only a second writer at a moment
// shows: explore's with lines, not auto's faults; docs/explore.md.)
func TestAutoFinalizerVariant(t *testing.T) {
	const file = "../testdata/auto/webapp_delete.txtar"
	c := controlPlane(t)
	prod, err := Explore(context.Background(), c, refOptions(t, c, ""), file, ExploreOptions{})
	assert.NilError(t, err)
	assert.Assert(t, prod.Auto != nil, "explored nothing auto")
	assert.DeepEqual(t, findings(prod), []string(nil))

	rep, err := Explore(context.Background(), c, refOptions(t, c, "finalizer-before-cleanup"), file, ExploreOptions{})
	assert.NilError(t, err)
	failed := rep.Failed()
	assert.Equal(t, len(failed), 1, "want one finding:\n%s", rep.Table())
	il := failed[0]
	want := []explore.Difference{{Kind: "history", Object: "registrations/web", Field: "delete by controller (204)", Reference: "1", Run: "0"}}
	assert.DeepEqual(t, il.Differences, want)
	assert.Equal(t, il.Class, auto.ClassIntermediate)
	// Every scenario it ran: the learning run, the second reference and
	// the twin of the restarts, the plans, the twin of the stale plans
	// (one resource, webapps), and the finding's rerun.
	assert.Equal(t, rep.Auto.Runs, 1+2+len(rep.Interleavings)+1+1, "%s", rep.Table())
	assert.Assert(t, len(il.Emit) > 0, "no regression scenario emitted")

	emitted := filepath.Join(t.TempDir(), "finalizer_emitted.txtar")
	assert.NilError(t, os.WriteFile(emitted, il.Emit, 0o644))
	for _, tc := range []struct {
		bug    string
		passed bool
	}{{"finalizer-before-cleanup", false}, {"", true}} {
		opts := refOptions(t, c, tc.bug)
		opts.Files = []string{emitted}
		res := RunFiles(context.Background(), c, opts)
		assert.Equal(t, len(res), 1)
		assert.Equal(t, res[0].Passed, tc.passed, "against %q:\n%s", tc.bug, res[0].Log)
		if !tc.passed {
			assert.Assert(t, strings.Contains(res[0].Log, "wire controller delete registrations/web 204 1"), "failed elsewhere:\n%s", res[0].Log)
		}
	}
}

// TestAutoShrink explores auto_mover_shrink.txtar, the mover's lost
// value with more setup and workload than the bug needs, with its
// findings' regression scenarios shrunk (ExploreOptions.Shrink, as
// racekit explore --emit does). Each must say what it left out: the
// ConfigMap nobody reads and the wait the settling makes redundant, and
// not src, the mover or the job; it must still fail against the mover
// at its claim, and pass against the safe mover, which creates dst before
// it deletes src (the same scenario with the other controller started).
func TestAutoShrink(t *testing.T) {
	rep := exploreAuto(t, "testdata/shrink/auto_mover_shrink.txtar", ExploreOptions{Shrink: true})
	failed := rep.Failed()
	assert.Assert(t, len(failed) > 0, "nothing found:\n%s", rep.Table())
	// Each smaller scenario runs beside its twin: the count is of pairs,
	// and the table says it.
	assert.Assert(t, rep.Auto.Shrunk > 0 && rep.Auto.Shrunk%2 == 0, "shrinker's runs: %d", rep.Auto.Shrunk)
	assert.Assert(t, strings.Contains(rep.Table(), fmt.Sprintf("; %d runs shrinking the findings", rep.Auto.Shrunk)), rep.Table())
	// The two findings differ alike: the second, in plan order, takes
	// what the first's shrinking left out, checked in one pair of runs.
	var as []string
	for _, il := range failed {
		if m := shrunkAs.FindStringSubmatch(string(il.Emit)); m != nil && m[1] != "" {
			as = append(as, il.Name+" as "+m[1])
		}
	}
	assert.DeepEqual(t, as, []string{failed[1].Name + " as " + failed[0].Name})
	for _, il := range failed {
		t.Run(il.Name, func(t *testing.T) {
			emitted := string(il.Emit)
			t.Log(emitted)
			assert.Assert(t, shrunkAs.MatchString(emitted), "not shrunk:\n%s", emitted)
			script := string(txtarComment(il.Emit))
			for _, gone := range []string{"\ncreate unrelated.yaml\n", "\nawait controller watch configmaps 200\n"} {
				assert.Assert(t, !strings.Contains(script, gone), "%q is still a command:\n%s", gone, emitted)
			}
			for _, kept := range []string{"\ncreate src.yaml\n", "\nstart mover\n", "\ndo create job.yaml"} {
				assert.Assert(t, strings.Contains(script, kept), "%q was left out:\n%s", kept, emitted)
			}
			dir := t.TempDir()
			for _, tc := range []struct {
				controller string
				passed     bool
			}{{"mover", false}, {"mover-safe", true}} {
				path := filepath.Join(dir, tc.controller+".txtar")
				assert.NilError(t, os.WriteFile(path, []byte(moverName.ReplaceAllString(emitted, "${1}"+tc.controller)), 0o644))
				opts := ScriptOptions{Controllers: append(testControllers(), runningControllers()...), Files: []string{path}}
				res := RunFiles(context.Background(), controlPlane(t), opts)
				assert.Equal(t, res[0].Passed, tc.passed, "%s:\n%s", tc.controller, res[0].Log)
				if !tc.passed {
					assert.Assert(t, strings.Contains(res[0].Log, "FAIL: ") && strings.Contains(res[0].Log, "field configmaps/dst data.value moved"), "failed elsewhere:\n%s", res[0].Log)
				}
			}
		})
	}
}

// shrunkAs matches an emitted scenario's note that it was shrunk, with
// the finding whose left-out lines it took, if any.
var shrunkAs = regexp.MustCompile(`(?m)^# Shrunk(?: as (\S+) was, whose finding is the same)?: it still fails at `)

// moverName matches the commands of an emitted scenario that name the
// mover (start, idle, a hook's restart), for the safe mover to take its
// place.
var moverName = regexp.MustCompile(`(?m)^((?:start|idle|on .*: restart) )mover$`)

// txtarComment returns the script part of a txtar archive: what comes
// before its first file.
func txtarComment(script []byte) []byte {
	s := string(script)
	if i := strings.Index(s, "\n-- "); i >= 0 {
		return []byte(s[:i])
	}
	return script
}
