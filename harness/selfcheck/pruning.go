package selfcheck

import (
	"fmt"
	"slices"
	"strings"

	"github.com/racekit/racekit/harness/explore"
)

// PruningCheck is how an exploration with its moments left out (pruned)
// compares with the same exploration of every moment (whole,
// explore.Options.Exhaustive): the rules that leave moments out must not
// change a verdict.
type PruningCheck struct {
	// Differences are what breaks that: the whole exploration left a
	// moment out, or its moments are not the pruned one's with those it
	// left out; or a run of the whole exploration has no twin in the
	// pruned one, or not the verdict of its twin.
	Differences []string
	// Racing are the runs of the whole exploration at the moments the
	// pruned one left out as racing with a controller that runs on its
	// own, each by its hooks (RunKey) with its verdict (Verdict). They
	// have no twin: the pruned report claims, per moment, what races
	// there, and the caller judges that claim.
	Racing map[string]string
}

// CheckPruning compares pruned, an exploration with its equivalent and
// racing moments left out, with whole, the same exploration of every
// moment. A run's twin is the run of the same interferers at the same
// moments, but that a first hook at a moment left out as equivalent moves
// to the moment explored instead (its second hook, at depth 2, fires in a
// run the first has changed, where every moment counts).
func CheckPruning(pruned, whole *explore.Report) PruningCheck {
	var out PruningCheck
	if whole.Equivalent != 0 || len(whole.Racing) != 0 {
		out.Differences = append(out.Differences, fmt.Sprintf("the exhaustive exploration left %d moments out as equivalent and %d as racing", whole.Equivalent, len(whole.Racing)))
	}
	var prunedAll, wholeAll []string
	for _, m := range whole.Moments {
		wholeAll = append(wholeAll, m.Trigger())
	}
	for _, m := range pruned.Moments {
		prunedAll = append(prunedAll, m.Trigger())
	}
	for _, e := range pruned.LeftOut {
		prunedAll = append(prunedAll, e.Moment.Trigger())
	}
	racing := map[explore.Moment]bool{}
	for _, rc := range pruned.Racing {
		prunedAll = append(prunedAll, rc.Moment.Trigger())
		racing[rc.Moment] = true
	}
	slices.Sort(prunedAll)
	slices.Sort(wholeAll)
	if !slices.Equal(prunedAll, wholeAll) {
		out.Differences = append(out.Differences, fmt.Sprintf("the moments differ:\n  pruned, with those left out: %s\n  exhaustive:                  %s", strings.Join(prunedAll, "; "), strings.Join(wholeAll, "; ")))
	}
	twin := map[explore.Moment]explore.Moment{}
	for _, e := range pruned.LeftOut {
		twin[e.Moment] = e.Twin
	}
	got := map[string]string{}
	for _, il := range pruned.Interleavings {
		got[RunKey(il.Hooks...)] = Verdict(il)
	}
	for _, il := range whole.Interleavings {
		if slices.ContainsFunc(il.Hooks, func(h explore.Hook) bool { return racing[h.Moment] }) {
			if out.Racing == nil {
				out.Racing = map[string]string{}
			}
			out.Racing[RunKey(il.Hooks...)] = Verdict(il)
			continue
		}
		hs := slices.Clone(il.Hooks)
		if len(hs) > 0 {
			if tw, ok := twin[hs[0].Moment]; ok && !hs[0].Every {
				hs[0].Moment = tw
			}
		}
		want, ok := got[RunKey(hs...)]
		switch {
		case !ok:
			out.Differences = append(out.Differences, fmt.Sprintf("the run at %s has no twin in the pruned exploration", RunKey(il.Hooks...)))
		case Verdict(il) != want:
			out.Differences = append(out.Differences, fmt.Sprintf("the run at %s: %s; its twin at %s: %s", RunKey(il.Hooks...), Verdict(il), RunKey(hs...), want))
		}
	}
	return out
}

// Verdict is a run's outcome, for comparing runs: pass, n/a, or FAIL with
// the file:line, command and kind of the first failure that made it a
// finding.
func Verdict(il explore.Interleaving) string {
	switch {
	case il.Passed:
		return "pass"
	case il.NotApplicable:
		return "n/a"
	}
	for _, f := range il.Failures {
		if !f.Tolerated {
			return "FAIL " + f.Pos() + " " + f.Command + " " + string(f.Kind)
		}
	}
	return "FAIL " + il.Failure
}

// RunKey names a run by its hooks' moments and interferers.
func RunKey(hs ...explore.Hook) string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Trigger()+" | "+h.Interferer)
	}
	return strings.Join(out, " + ")
}
