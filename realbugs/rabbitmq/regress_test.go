package rabbitmq_test

import (
	"regexp"
	"testing"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/realbugs/rabbitmq"
)

// outcome is what a regression form must do against one release: pass,
// or fail with a log that want matches (the failing line and what it saw).
type outcome struct {
	pass bool
	want string
}

// regressions says what each regression form in testdata/regressions does
// against each release, by version. A form fails on the release that has
// its bug, at the claim that bug breaks, and passes on the first release
// that fixes it; #758 is fixed by none.
var regressions = map[string]map[string]outcome{
	"648_stale_restart": {
		rabbitmq.V160.Version:  readFails("field statefulsets/r-server metadata.uid", `statefulsets.apps "r-server" not found`),
		rabbitmq.V170.Version:  passes,
		rabbitmq.V1100.Version: passes,
	},
	"782_crash_between_steps": {
		rabbitmq.V160.Version:  failsAt("field persistentvolumeclaims/persistence-r782-server-0 spec.resources.requests.storage 15Gi", "10Gi"),
		rabbitmq.V170.Version:  failsAt("field persistentvolumeclaims/persistence-r782-server-0 spec.resources.requests.storage 15Gi", "10Gi"),
		rabbitmq.V1100.Version: passes,
	},
	"758_unobserved_across_restart": {
		rabbitmq.V160.Version:  failsAt("field statefulsets/r-server spec.replicas 3", "2"),
		rabbitmq.V170.Version:  failsAt("field statefulsets/r-server spec.replicas 3", "2"),
		rabbitmq.V1100.Version: failsAt("field statefulsets/r-server spec.replicas 3", "2"),
	},
}

// passes is the outcome of a form against a release that fixed its bug.
var passes = outcome{pass: true}

// failsAt is the outcome of a form that fails at the assertion claim,
// which saw got instead (the +got side of its diff). go-cmp writes its
// diffs with spaces or, at random, non-breaking spaces, so that no one
// relies on their exact form: the pattern takes either.
func failsAt(claim, got string) outcome {
	return outcome{want: `(?s)\.txtar:\d+: ` + regexp.QuoteMeta(claim) + `: .*?\+[\s\x{a0}]*"` + regexp.QuoteMeta(got) + `"`}
}

// readFails is the outcome of a form that fails at the assertion claim
// because the object it reads is gone: the server's answer is msg.
func readFails(claim, msg string) outcome {
	return outcome{want: `\.txtar:\d+: ` + regexp.QuoteMeta(claim) + ` .*: ` + regexp.QuoteMeta(msg)}
}

// TestRegressions runs each regression form against each release and
// checks both directions: it fails, as expected, where the bug is, and
// passes where it was fixed. racekit.Play returns the outcomes instead of
// failing the test.
func TestRegressions(t *testing.T) {
	for _, r := range rabbitmq.Releases {
		t.Run(r.Version, func(t *testing.T) {
			results, err := racekit.Play(setup(t, "testdata/regressions", r))
			if err != nil {
				t.Fatal(err)
			}
			checkOutcomes(t, r, results, regressions, "testdata/regressions")
		})
	}
}

// checkOutcomes fails t for each result that did not do what table
// expects of it against r, and for each script of dir it expects that did
// not run.
func checkOutcomes(t *testing.T, r rabbitmq.Release, results []racekit.Result, table map[string]map[string]outcome, dir string) {
	t.Helper()
	ran := map[string]bool{}
	for _, res := range results {
		ran[res.Name] = true
		want, ok := table[res.Name][r.Version]
		if !ok {
			t.Errorf("%s: the table for %s says nothing of it against %s: add what it must do", res.Name, dir, r.Release())
			continue
		}
		switch {
		case want.pass && !res.Passed:
			t.Errorf("%s against %s: failed, want it to pass (the release fixes the bug):\n%s", res.Name, r.Release(), res.Log)
		case !want.pass && res.Passed:
			t.Errorf("%s against %s: passed, want it to fail (the release has the bug):\n%s", res.Name, r.Release(), res.Log)
		case !want.pass && !regexp.MustCompile(want.want).MatchString(res.Log):
			t.Errorf("%s against %s: failed, but not as it should: want the log to match %q:\n%s", res.Name, r.Release(), want.want, res.Log)
		}
	}
	for name, byVersion := range table {
		if _, ok := byVersion[r.Version]; ok && !ran[name] {
			t.Errorf("%s did not run against %s: is it in %s?", name, r.Release(), dir)
		}
	}
}
