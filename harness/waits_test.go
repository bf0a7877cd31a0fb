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
// nothing will meet, an await or idle of a process whose predicate drops
// all it is shown (no item ever reaches its workqueue), and an idle of a
// process with no workqueue (as one waiting to lead has none), end marked
// Settled with it, and unmarked, at their bound, without it: the bound
// with the option is two minutes, so an early end that did not come
// fails the test on its mark, not on a time. An await that will be met
// never ends early: an in-process watcher's, each create coming after it
// settled, and a process's, right after its informer's list (the window
// before its first add) and after it settled; each script runs four
// times, all at once.
func TestEndWaitsOnSettle(t *testing.T) {
	for _, tc := range []struct {
		file, command string
		line          int
		message       string
	}{
		{"never", "await controller update configmaps/c 200", 6, "everything that runs settled without it"},
		{"stalled_await", "await drops update configmaps/c 200", 8, "everything that runs settled without it"},
		{"stalled_idle", "idle drops", 6, "none has reached a workqueue yet"},
		{"stalled_noqueue", "idle noqueue", 7, "show no workqueue yet"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			for _, settle := range []bool{true, false} {
				wait := time.Second
				if settle {
					wait = 2 * time.Minute
				}
				res := runSettling(t, "testdata/settle/"+tc.file+".txtar", settle, wait)
				assert.Assert(t, !res.Passed, "the scenario passed:\n%s", res.Log)
				assert.Assert(t, len(res.Failures) > 0, res.Log)
				f := res.Failures[0]
				assert.Equal(t, f.Command, tc.command, res.Log)
				assert.Equal(t, f.Line, tc.line)
				assert.Equal(t, f.Settled, settle, "EndWaitsOnSettle %v:\n%s", settle, res.Log)
				if !settle {
					assert.Assert(t, strings.Contains(f.Message, "ran out of time"), f.Message)
				} else {
					assert.Assert(t, strings.Contains(f.Message, tc.message), f.Message)
				}
			}
		})
	}
	for _, file := range []string{"met", "met_process"} {
		for i := range 4 {
			t.Run(fmt.Sprintf("%s/%d", file, i), func(t *testing.T) {
				t.Parallel()
				res := runSettling(t, "testdata/settle/"+file+".txtar", true, 2*time.Minute)
				assert.Assert(t, res.Passed, "an await that was to be met ended early:\n%s", res.Log)
			})
		}
	}
}
