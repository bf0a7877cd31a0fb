package rabbitmq_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/realbugs/rabbitmq"
)

// TestAuto explores testdata/auto with explore auto against v1.6.0, which
// has #648, and v1.7.0 and v1.10.0, which fixed it as published: on
// v1.6.0 a confirmed finding must
// say that the operator deleted the new cluster's StatefulSet once more
// than in the references, with no hint in the scenario; on v1.7.0 none
// may; the regression scenario emitted for a confirmed #648 on v1.6.0
// must fail there and pass on v1.10.0. Every other
// failed plan must be a marker a crash lost
// (markerLost: both releases annotate what they wrote in a later step,
// and a restart in between leaves it unset); anything else is a false
// alarm and fails the test. (A stale plan whose operator's last write to
// an object met a 409 against its stale view is judged on its creates,
// deletes and failures alone, since the operator waits to retry in a
// back-off; a condition that reports such a 409 is the fault's echo:
// docs/explore.md, explore auto.)
//
// v1.7.0's fix is not whole, and explore auto found how: in a stale plan
// of rabbitmqclusters, a restarted life that reconciles the old cluster
// from its stale view before the view catches up updates the new
// cluster's StatefulSet, and controller-runtime v0.8.3's
// SetControllerReference, which takes two owners with the same group,
// kind and name for one, makes the old cluster its controller; when the
// view catches up, the old cluster's finalizer finds the StatefulSet
// "owned by" it, and deletes it, UID precondition and all. On v1.7.0 and
// v1.10.0 (controller-runtime v0.9.6, whose referSameObject compares no
// UID either, nor does v0.25.2's) the test allows it only with that
// evidence in the run's trace (stolen), and logs where it showed.
// It does not require it: until 2026-12-07 v1.7.0 had to show it, and
// in make stress's quiet round, with other tests beside it (load 5 to 6),
// the plan passed without it (the reason below, in its first run this
// time). Until 2026-12-03 it came in some runs and not in others: idle settled
// the operator by a quiet period (its metrics were off), and the view
// caught up at once, so whether a reconcile read the old cluster being
// deleted was a race; now the operator serves its metrics, idle settles
// it by its workqueues, and the plan catches up one event at a time
// (catch-up), so it comes in the plan's run. Its rerun, which confirms a
// finding, did not show it again once in make test on a loaded machine
// (2026-12-07, load 8 to 10: "flaky"): the operator retries a 409 after a
// back-off timer, and an item waiting on that timer is in no workqueue
// idle reads, so whether the retry comes before the view's next step
// still depends on time (docs/explore.md). The test reads the path from
// the run's trace, confirmed or flaky.
func TestAuto(t *testing.T) {
	for _, r := range []rabbitmq.Release{rabbitmq.V160, rabbitmq.V170, rabbitmq.V1100} {
		t.Run(r.Version, func(t *testing.T) {
			results, err := racekit.Play(setup(t, "testdata/auto", r))
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range results {
				rep := res.Explored
				if rep == nil || rep.Auto == nil {
					t.Fatalf("%s explored nothing auto:\n%s", res.Name, res.Log)
				}
				t.Log(rep.Table())
				if a := rep.Auto; len(a.Clock) > 0 {
					// The operator serves its metrics (metrics=$METRICS_ADDR):
					// a quiet period would make each plan's verdict a matter
					// of how far the operator got before it passed.
					t.Errorf("%s on %s: idle settled %v by a quiet period in %d runs, want every run settled by its workqueues", res.Name, r.Version, a.Clock, a.ClockRuns)
				}
				// A finding whose rerun did not show it again (flaky) is
				// looked at too: it is no confirmed finding of #648, but a
				// #648 with no stolen owner on v1.7.0 must not show even
				// once, and the stolen-owner path is in the run's trace
				// whether or not its rerun, under load, came the same way.
				found, unexplained, stole := false, []string{}, map[string]bool{}
				var confirmed *racekit.Interleaving // a confirmed #648, whose emitted scenario is played below
				for _, il := range rep.Interleavings {
					if il.Passed || il.NotApplicable {
						continue
					}
					if !markerLost(il) && !deletedSts(il) {
						// Neither a marker a crash lost nor #648's
						// signature: a false alarm.
						t.Errorf("%s on %s: %s (%s) failed, and nothing explains it: a false alarm: %v", res.Name, r.Version, il.Name, il.Class, il.Differences)
						// What the twins showed, which set aside
						// the plans' differences they showed too.
						for _, tw := range rep.Auto.Twins {
							t.Logf("  twin %s (%s): read %v, %v", tw.Name, tw.Group, tw.Read, tw.Differences)
						}
					}
					for _, d := range il.Differences {
						if d.Kind == "history" && d.Object == "statefulsets/r-server" && strings.HasPrefix(d.Field, "delete by rabbitmq") {
							found = found || !il.Flaky
							// #648 as published: a view in which the old
							// cluster is being deleted, not the view from
							// before the workload (the stolen owner's).
							if !il.Flaky && confirmed == nil && il.Name != stalePlan {
								confirmed = &il
							}
							if stolen(il.Trace.Rows()) {
								stole[il.Name] = true
								if il.Flaky {
									t.Logf("%s on %s: %s showed the stolen-owner path, and its rerun did not", res.Name, r.Version, il.Name)
								}
							} else {
								unexplained = append(unexplained, il.Name)
							}
						}
					}
				}
				switch {
				case r == rabbitmq.V160 && !found:
					t.Errorf("%s on %s: no finding of #648 (the new StatefulSet deleted):\n%s", res.Name, r.Version, rep.Table())
				case r != rabbitmq.V160 && len(unexplained) > 0:
					t.Errorf("%s on %s: #648 found (the new StatefulSet deleted) in %v, with no stale update of it before, want it not:\n%s", res.Name, r.Version, unexplained, rep.Table())
				case r == rabbitmq.V170 && !stole[stalePlan]:
					t.Logf("%s on %s: %s did not show the stolen-owner path this time (a stale update of the new StatefulSet, then the old cluster's finalizer deleting it): whether the operator's retry after a 409 comes before the view's next step is a matter of its back-off timer", res.Name, r.Version, stalePlan)
				case r != rabbitmq.V160 && found:
					t.Logf("%s on %s: the new StatefulSet deleted after a stale life updated it (its controller reference taken by the old cluster)", res.Name, r.Version)
				}
				if r == rabbitmq.V160 && confirmed != nil {
					playEmitted(t, *confirmed, "648_emitted",
						on{rabbitmq.V160, racekit.FailsAt("wire rabbitmq create statefulsets/r-server 201 2").Saw("3")},
						on{rabbitmq.V1100, racekit.Passes()})
				}
			}
		})
	}
}

// deletedSts reports whether il's differences say that the operator
// deleted statefulsets/r-server more often than in the references: #648's
// signature, on v1.7.0 by the stolen owner.
func deletedSts(il racekit.Interleaving) bool {
	return slices.ContainsFunc(il.Differences, func(d racekit.Difference) bool {
		return d.Kind == "history" && d.Object == "statefulsets/r-server" && strings.HasPrefix(d.Field, "delete by rabbitmq")
	})
}

// stalePlan is the plan that shows v1.7.0's stolen-owner path when the
// operator's retry comes in time: the stale view of rabbitmqclusters as of
// before the workload.
const stalePlan = "stale_rabbitmqclusters_before_the_workload"

// stolen reports whether rows, a plan's trace, show v1.7.0's way to #648's
// end: after the restart (the mark auto-restart), the operator updated
// statefulsets/r-server and then deleted, with a UID precondition, the
// StatefulSet that the workload's create made (the second create of it).
func stolen(rows []racekit.Row) bool {
	restarted, updated, creates, made := false, false, 0, ""
	for _, r := range rows {
		switch {
		case r.View != nil && r.View.Name == "auto-restart":
			restarted = true
		case r.Actor != "rabbitmq" || r.Object != "statefulsets/r-server" || r.Code/100 != 2:
		case r.Verb == "create":
			if creates++; creates == 2 {
				made = r.GotUID
			}
		case r.Verb == "update" && restarted:
			updated = true
		case r.Verb == "delete" && restarted && updated && made != "" && r.SentUID == made:
			return true
		}
	}
	return false
}

// TestStolen: stolen finds v1.7.0's path to #648's end only when every
// step of it is in the trace.
func TestStolen(t *testing.T) {
	sts := func(verb string, code int, sent, got string) racekit.Row {
		return racekit.Row{Actor: "rabbitmq", Verb: verb, Object: "statefulsets/r-server", Code: code, SentUID: sent, GotUID: got}
	}
	restart := racekit.Row{View: &racekit.ViewChange{Name: "auto-restart"}}
	old, made := sts("create", 201, "", "uid1"), sts("create", 201, "", "uid2")
	update, del := sts("update", 200, "", "uid2"), sts("delete", 200, "uid2", "uid2")
	for _, tc := range []struct {
		name string
		rows []racekit.Row
		want bool
	}{
		{"updated after the restart, then deleted", []racekit.Row{old, made, restart, update, del}, true},
		{"no update after the restart", []racekit.Row{old, made, update, restart, del}, false},
		{"deleted before the restart", []racekit.Row{old, made, update, del, restart}, false},
		{"the old StatefulSet deleted", []racekit.Row{old, made, restart, update, sts("delete", 200, "uid1", "uid1")}, false},
		{"the delete refused", []racekit.Row{old, made, restart, update, sts("delete", 409, "uid2", "")}, false},
		{"another actor's update", []racekit.Row{old, made, restart, {Actor: "alice", Verb: "update", Object: "statefulsets/r-server", Code: 200}, del}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stolen(tc.rows); got != tc.want {
				t.Errorf("stolen = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAutoUnobserved explores testdata/auto-unobserved (Sieve's scale
// workload, 1 → 3 → 2, with no hint) against v1.6.0 and v1.10.0: no
// release fixes #758, so on each the one finding must be the unobserved
// plan, with the StatefulSet at 2 where the references kept 3, confirmed
// by its rerun; every other plan (the intermediate and stale ones, and
// the neutral twins) passes or is n/a, a false alarm rate of 0. The
// regression scenario it emits must fail on the release it was explored
// on, at its first claim: the references' refusal (ReconcileSuccess False
// UnsupportedOperation), where the operator, never asked to scale down,
// still says Unknown Initialising. (v1.7.0 gives the same single
// finding: docs/real-bugs.md.)
func TestAutoUnobserved(t *testing.T) {
	for _, r := range []rabbitmq.Release{rabbitmq.V160, rabbitmq.V1100} {
		t.Run(r.Version, func(t *testing.T) {
			rep := exploreOne(t, "testdata/auto-unobserved", r)
			failed := rep.Failed()
			if len(failed) != 1 {
				t.Fatalf("%d failed plans, want 1 (#758's unobserved plan):\n%s", len(failed), rep.Table())
			}
			il := failed[0]
			if il.Class != "unobserved" || il.Flaky {
				t.Errorf("the finding is a %s plan (flaky %v), want a confirmed unobserved one:\n%s", il.Class, il.Flaky, rep.Table())
			}
			replicas := false
			for _, d := range il.Differences {
				if d.Kind == "field" && d.Object == "statefulsets/r-server" && d.Field == "spec.replicas" && d.Reference == "3" && d.Run == "2" {
					replicas = true
				}
			}
			if !replicas {
				t.Errorf("the finding's differences %v lack statefulsets/r-server spec.replicas 3 in the references, 2 here", il.Differences)
			}
			playEmitted(t, il, "758_emitted", on{r,
				racekit.FailsAt("condition rabbitmqclusters/r ReconcileSuccess False UnsupportedOperation").Saw("ReconcileSuccess Unknown Initialising")})
		})
	}
}
