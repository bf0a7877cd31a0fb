package selfcheck

import (
	"fmt"
	"slices"
	"strings"

	"github.com/racekit/racekit/harness/explore"
)

// exploreDifferences says how b's exploration differs from a's: the
// workload's moments (those explored and those left out, together) must
// be the same, and every run of each must have the verdict of its twin in
// the other. A run's twin is the run of the same interferers at the same
// moments, but that a first hook at a moment the other exploration left
// out as equivalent moves to the moment explored instead (the pairing
// TestExplorePruningIsSound checks, in both directions).
func exploreDifferences(a, b judged) []string {
	var out []string
	ma, mb := allMoments(a.explored), allMoments(b.explored)
	if !slices.Equal(ma, mb) {
		out = append(out, fmt.Sprintf("the workload's moments differ:\n  plain:   %s\n  changed: %s", strings.Join(ma, "; "), strings.Join(mb, "; ")))
	}
	out = append(out, twinDifferences(b, a, "changed", "plain")...)
	out = append(out, twinDifferences(a, b, "plain", "changed")...)
	if len(out) > 0 {
		out = append(out, "plain:\n"+a.explored.Table()+"changed (its lines are those of the script that ran, noise and all):\n"+b.explored.Table())
	}
	return out
}

// twinDifferences checks each run of from against its twin in to.
func twinDifferences(from, to judged, fromName, toName string) []string {
	twin := map[explore.Moment]explore.Moment{}
	for _, e := range to.explored.LeftOut {
		twin[e.Moment] = e.Twin
	}
	verdicts := map[string]string{}
	for _, il := range to.explored.Interleavings {
		verdicts[runKeyOf(il, il.Hooks)] = to.runVerdict(il)
	}
	var out []string
	for _, il := range from.explored.Interleavings {
		hs := slices.Clone(il.Hooks)
		if len(hs) > 0 && il.Class == "" {
			if tw, ok := twin[hs[0].Moment]; ok && !hs[0].Every {
				hs[0].Moment = tw
			}
		}
		got := from.runVerdict(il)
		want, ok := verdicts[runKeyOf(il, hs)]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("the %s run at %s has no twin in the %s exploration", fromName, runKeyOf(il, il.Hooks), toName))
		case got != want:
			out = append(out, fmt.Sprintf("the %s run at %s: %s; its twin in the %s exploration, at %s: %s", fromName, runKeyOf(il, il.Hooks), got, toName, runKeyOf(il, hs), want))
		}
	}
	return out
}

// runKeyOf names the run il, with hooks hs, across two explorations: by
// its hooks (RunKey), or, for an explore auto plan (il.Class set), whose
// hooks may be none (a reference run, a twin, a plan whose fault comes
// after the workload) or two, by its class and plan name, which come from
// the moments the noise keeps.
func runKeyOf(il explore.Interleaving, hs []explore.Hook) string {
	if il.Class != "" {
		return il.Class + " " + il.Name
	}
	return RunKey(hs...)
}

// allMoments returns every moment of an exploration, explored or left
// out (as equivalent, or racing), sorted.
func allMoments(r *explore.Report) []string {
	var out []string
	for _, m := range r.Moments {
		out = append(out, m.Trigger())
	}
	for _, e := range r.LeftOut {
		out = append(out, e.Moment.Trigger())
	}
	for _, rc := range r.Racing {
		out = append(out, rc.Moment.Trigger())
	}
	slices.Sort(out)
	return out
}

// runVerdict renders an interleaving's judged for comparing runs: pass,
// n/a, or the verdict of the failure that makes it a finding, at the
// original's line.
func (o judged) runVerdict(il explore.Interleaving) string {
	switch {
	case il.Passed:
		return "pass"
	case il.NotApplicable:
		return "n/a"
	}
	for _, f := range il.Failures {
		if !f.Tolerated {
			return o.at(f.Verdict()).Key()
		}
	}
	return "FAIL " + il.Failure
}
