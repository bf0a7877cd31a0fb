package harness

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/language"
)

// runSettling runs the scenario in file with the controller scripts'
// controllers, waits bounded by wait, and explore auto's shrinker's early
// end of a wait (language.Options.EndWaitsOnSettle) on or off.
func runSettling(t *testing.T, file string, settle bool, wait time.Duration) Result {
	t.Helper()
	o := ScriptOptions{Controllers: append(testControllers(), runningControllers()...), Files: []string{file}, WaitTimeout: wait}
	lo, err := o.Language()
	assert.NilError(t, err)
	lo.EndWaitsOnSettle = settle
	res := language.RunFiles(context.Background(), controlPlane(t), lo)
	assert.Equal(t, len(res), 1)
	return res[0]
}

// TestEndWaitsOnSettle checks the early end of a wait that explore auto's
// shrinker asks for (language.Options.EndWaitsOnSettle). An await that
// nothing will meet, the watcher settled, ends marked Settled with it,
// and unmarked, at its bound, without it: the bound with the option is
// two minutes, so an early end that did not come fails the test on its
// mark, not on a time. An await of a process whose predicate drops all it
// is shown does not end early: no evidence tells its handlers dropped the
// objects from their being about to add them, so it runs to its bound
// either way. An await that will be met never ends early: an in-process
// watcher's, each create coming after it settled, and a process's, right
// after its informer's list (the window before its first add) and after
// it settled; each script runs four times, all at once. A process that
// waits to lead on a lock another holds past the wait's bound (a lease
// of ten minutes) ends an await early with the option, saying so, and
// runs to its bound without; so does its idle, when its controller, and
// so its workqueue, is made only once it leads; one whose lock another
// holds for three seconds takes the lead and meets its await, or
// settles.
func TestEndWaitsOnSettle(t *testing.T) {
	for _, tc := range []struct {
		file, command string
		line          int
		ends          bool
	}{
		{"never", "await controller update configmaps/c 200", 6, true},
		{"stalled_await", "await drops update configmaps/c 200", 8, false},
		{"lock_held", "await copier update configmaps/c1 200", 11, true},
		{"lock_held_idle", "idle copier", 11, true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			for _, settle := range []bool{true, false} {
				wait := time.Second
				if settle && tc.ends {
					wait = 2 * time.Minute
				}
				res := runSettling(t, "testdata/settle/"+tc.file+".txtar", settle, wait)
				assert.Assert(t, !res.Passed, "the scenario passed:\n%s", res.Log)
				assert.Assert(t, len(res.Failures) > 0, res.Log)
				f := res.Failures[0]
				assert.Equal(t, f.Command, tc.command, res.Log)
				assert.Equal(t, f.Line, tc.line)
				ended := settle && tc.ends
				assert.Equal(t, f.Settled, ended, "EndWaitsOnSettle %v:\n%s", settle, res.Log)
				switch {
				case ended && tc.file == "lock_held_idle":
					assert.Assert(t, strings.Contains(f.Message, "copier cannot settle before the wait's bound: its metrics show no workqueue, which such a process makes as it leads, and it waits to lead: leases/copier-lock is held by someone-else with a lease of 10m0s"), f.Message)
				case ended:
					assert.Assert(t, strings.Contains(f.Message, "everything that runs settled without it"), f.Message)
					if tc.file == "lock_held" {
						assert.Assert(t, strings.Contains(f.Message, "copier waits to lead: leases/copier-lock is held by someone-else with a lease of 10m0s"), f.Message)
					}
				default:
					assert.Assert(t, strings.Contains(f.Message, "ran out of time"), f.Message)
				}
			}
		})
	}
	for _, file := range []string{"met", "met_process", "lock_expires", "lock_expires_idle"} {
		for i := range 4 {
			t.Run(fmt.Sprintf("%s/%d", file, i), func(t *testing.T) {
				t.Parallel()
				res := runSettling(t, "testdata/settle/"+file+".txtar", true, 2*time.Minute)
				assert.Assert(t, res.Passed, "a wait that was to be met ended early:\n%s", res.Log)
			})
		}
	}
}
