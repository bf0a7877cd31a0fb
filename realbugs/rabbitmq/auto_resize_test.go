package rabbitmq_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/realbugs/rabbitmq"
)

// The bugs explore auto finds over Sieve's resize workload
// (testdata/auto-resize), as explain names them.
const (
	bug782       = "#782"
	bug653       = "#653"
	bugCreatedAt = "a marker lost"
)

// explainResize names what a failed plan of the resize workload shows,
// from its differences and its trace, or "" when nothing explains it (a
// false alarm):
//   - #782: an intermediate plan whose PVC ends at 10Gi where the
//     references resized it to 15Gi;
//   - #653: a stale plan in whose run the restarted operator deleted the
//     StatefulSet, a resize it took from its stale view (the cluster's
//     old size, or the StatefulSet's);
//   - a marker lost (markerLost): an intermediate plan whose only
//     differences are annotations such as the StatefulSet's
//     rabbitmq.com/createdAt, unset: the life that created it was killed
//     before it annotated it.
func explainResize(il racekit.Interleaving) string {
	for _, d := range il.Differences {
		if il.Class == "intermediate" && d.Kind == "field" && d.Object == "persistentvolumeclaims/persistence-r782-server-0" &&
			d.Field == "spec.resources.requests.storage" && d.Reference == `"15Gi"` && d.Run == `"10Gi"` {
			return bug782
		}
	}
	if markerLost(il) {
		return bugCreatedAt
	}
	if il.Class == "stale" && deletedAfterRestart(il.Trace.Rows()) {
		return bug653
	}
	return ""
}

// markers are the annotations rabbitmq's annotateIfNeeded and
// restartStatefulSetIfNeeded write in a step after the write they mark
// (the StatefulSet created, a config map updated), for a later reconcile
// to act on: enable the feature flags, set the plugins, restart the
// pods.
var markers = []string{"rabbitmq.com/createdAt", "rabbitmq.com/pluginsUpdatedAt", "rabbitmq.com/serverConfUpdatedAt", "rabbitmq.com/lastRestartAt"}

// markerLost reports whether il is an intermediate plan whose only
// differences are markers the references set and the run left unset: the
// life that made the write was killed before the step that marks it, and
// the next life, which did not make it, never marks it.
func markerLost(il racekit.Interleaving) bool {
	if il.Class != "intermediate" || len(il.Differences) == 0 {
		return false
	}
	for _, d := range il.Differences {
		if d.Kind != "field" || d.Run != "<absent>" || !slices.ContainsFunc(markers, func(m string) bool { return strings.HasSuffix(d.Field, ".annotations."+m) }) {
			return false
		}
	}
	return true
}

// deletedAfterRestart reports whether rows, a plan's trace, hold a
// delete of the StatefulSet by the operator after its restart.
func deletedAfterRestart(rows []racekit.Row) bool {
	restarted := false
	for _, r := range rows {
		switch {
		case r.View != nil && r.View.Name == "auto-restart":
			restarted = true
		case restarted && r.Actor == "rabbitmq" && r.Verb == "delete" && r.Object == "statefulsets/r782-server" && r.Code/100 == 2:
			return true
		}
	}
	return false
}

// TestAutoResize explores testdata/auto-resize (Sieve's resize workload,
// 10Gi to 15Gi, with no hint) against v1.6.0, which has #782 and #653,
// and v1.10.0, which has neither. Every failed plan must be explained
// (explainResize); one that is not is a false alarm, and fails the test.
// On v1.6.0 #782 and #653 must each be a confirmed finding, and the
// regression scenario emitted for #782 must fail on v1.6.0 at its claim
// that the PVC is at 15Gi, and pass on v1.10.0.
func TestAutoResize(t *testing.T) {
	for _, r := range []rabbitmq.Release{rabbitmq.V160, rabbitmq.V1100} {
		t.Run(r.Version, func(t *testing.T) {
			rep := exploreOne(t, "testdata/auto-resize", r)
			found := map[string][]racekit.Interleaving{}
			for _, il := range rep.Failed() {
				why := explainResize(il)
				if why == "" {
					t.Errorf("%s (%s) failed, and nothing explains it: a false alarm: %v", il.Name, il.Class, il.Differences)
					continue
				}
				found[why] = append(found[why], il)
			}
			if r != rabbitmq.V160 {
				for _, bug := range []string{bug782, bug653} {
					if len(found[bug]) > 0 {
						t.Errorf("%s found on %s, which fixed it: %s", bug, r.Version, found[bug][0].Name)
					}
				}
				return
			}
			for _, bug := range []string{bug782, bug653} {
				if len(found[bug]) == 0 {
					t.Errorf("%s not found on %s:\n%s", bug, r.Version, rep.Table())
				}
			}
			if len(found[bug782]) > 0 {
				playEmitted(t, found[bug782][0], "782_emitted",
					on{rabbitmq.V160, racekit.FailsAt("field persistentvolumeclaims/persistence-r782-server-0 spec.resources.requests.storage 15Gi").Saw("10Gi")},
					on{rabbitmq.V1100, racekit.Passes()})
			}
		})
	}
}
