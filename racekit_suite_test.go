package racekit_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/racekit/racekit"
)

// copierSetup is TestClientGo's Setup, with Output.
func copierSetup(dir string) racekit.Setup {
	return racekit.Setup{Dir: dir,
		Controllers: []*racekit.Controller{racekit.ClientGo("copier", scheme.Scheme, &corev1.ConfigMap{}, newCopier)}}
}

// TestEnv plays a scenario through Start and Env.Play, as a Ginkgo suite
// does (examples/ginkgo runs one, without racekit.Main): the Result is the
// scenario's outcome as a value, the Env's Config is a superuser's on the
// same control plane, Output gets the log and the timeline, and what is
// asked of an Env that is not there or is stopped is an error that says so.
func TestEnv(t *testing.T) {
	var out outputBuffer
	s := copierSetup("testdata/clientgo")
	s.Output = &out
	env, err := racekit.Start(s)
	assert.NilError(t, err)
	t.Cleanup(func() { env.Stop() })

	names, err := s.Scenarios()
	assert.NilError(t, err)
	assert.DeepEqual(t, names, []string{"copier_conflict"})
	r, err := env.Play("copier_conflict")
	assert.NilError(t, err)
	assert.Assert(t, r.Passed, r.Log)
	assert.NilError(t, r.Check(racekit.Passes()))
	assert.Assert(t, out.contains("--- timeline of copier_conflict"), out.String())
	assert.Assert(t, out.contains("409 Conflict"), "the timeline shows the race's 409:\n%s", out.String())

	// The Config is the control plane's superuser: it lists namespaces.
	cs, err := kubernetes.NewForConfig(env.Config)
	assert.NilError(t, err)
	_, err = cs.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{})
	assert.NilError(t, err)

	_, err = env.Play("copier_conflicts")
	assert.ErrorContains(t, err, `racekit: no scenario copier_conflicts in testdata/clientgo (did you mean "copier_conflict"?)`)

	assert.NilError(t, env.Stop())
	assert.NilError(t, env.Stop(), "a second Stop does nothing")
	_, err = env.Play("copier_conflict")
	assert.ErrorContains(t, err, "the Env is stopped")

	var none *racekit.Env
	_, err = none.Play("copier_conflict")
	assert.ErrorContains(t, err, "racekit: no control plane: call env, err := racekit.Start(setup) in BeforeSuite")
	assert.ErrorContains(t, none.Stop(), "racekit: no control plane")
}

// TestStartRefusesBadInput: Start checks the Setup before it starts
// anything, and names the file and line of a scenario it cannot read.
func TestStartRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txtar")
	assert.NilError(t, os.WriteFile(bad, []byte("create a.yaml\n-- --\n"), 0o644))
	_, err := racekit.Start(copierSetup(dir))
	assert.ErrorContains(t, err, `bad.txtar:2: malformed file marker "-- --"`)

	_, err = copierSetup(t.TempDir()).Scenarios()
	assert.ErrorContains(t, err, "racekit: no *.txtar scenario in")
}

// outputBuffer is an Output a test reads.
type outputBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (o *outputBuffer) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *outputBuffer) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

func (o *outputBuffer) contains(s string) bool { return strings.Contains(o.String(), s) }

// TestEnvRuns lists an exploration's runs before any Env is started, as a
// Ginkgo suite does while it builds its tree (Setup.Runs), and plays each
// alone (Env.PlayRun): each run's outcome is the one the whole exploration
// gives it, its report holds that run alone, and both outcomes occur. A
// run the exploration does not make, and a run of a scenario that
// explores nothing, are errors, not passes.
func TestEnvRuns(t *testing.T) {
	s := copierSetup("testdata/envruns")
	runs, err := s.Runs("copier_explore")
	assert.NilError(t, err)
	assert.Assert(t, len(runs) > 1, "runs: %v", runs)
	none, err := s.Runs("copier_conflict")
	assert.NilError(t, err)
	assert.Assert(t, none == nil, "a scenario with no explore line has no runs: %v", none)

	env, err := racekit.Start(s)
	assert.NilError(t, err)
	t.Cleanup(func() { env.Stop() })
	whole, err := env.Play("copier_explore")
	assert.NilError(t, err)
	assert.Assert(t, whole.Explored != nil, whole.Log)
	want := map[string]bool{}
	var names []string
	for _, il := range whole.Explored.Interleavings {
		want[il.Name] = il.Passed
		names = append(names, il.Name)
	}
	assert.DeepEqual(t, runs, names)
	outcomes := map[bool]int{}
	for _, run := range runs {
		r, err := env.PlayRun("copier_explore", run)
		assert.NilError(t, err)
		assert.Equal(t, len(r.Explored.Interleavings), 1, "%s:\n%s", run, r.Log)
		assert.Equal(t, r.Explored.Interleavings[0].Name, run)
		assert.Equal(t, r.Passed, want[run], "%s: alone %v, in the whole exploration %v:\n%s", run, r.Passed, want[run], r.Log)
		outcomes[r.Passed]++
	}
	assert.Assert(t, outcomes[true] > 0 && outcomes[false] > 0, "both outcomes: %v", outcomes)

	_, err = env.PlayRun("copier_explore", runs[0]+"x")
	assert.ErrorContains(t, err, "the exploration makes no run "+runs[0]+"x (did you mean")
	_, err = env.PlayRun("copier_conflict", "after_controller_get")
	assert.ErrorContains(t, err, "copier_conflict explores nothing, so it has no runs")
	_, err = s.Runs("copier_explores")
	assert.ErrorContains(t, err, "racekit: no scenario copier_explores in testdata/envruns")
	var nilEnv *racekit.Env
	_, err = nilEnv.PlayRun("copier_explore", runs[0])
	assert.ErrorContains(t, err, "racekit: no control plane")
}
