package scenarios

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	"github.com/rogpeppe/go-internal/testscript"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/racekit/racekit/controller/race"
	"github.com/racekit/racekit/controller/teaching"
	"github.com/racekit/racekit/harness"
)

var update = flag.Bool("update", false, "rewrite the golden sections of the scenarios with what this run produced")

// cp is the control plane every scenario of this process shares.
var cp *harness.ControlPlane

func TestMain(m *testing.M) {
	flag.Parse()
	// envtest logs through controller-runtime's logger; unset, it warns on
	// stderr after 30 s, in the middle of the benchmark lines.
	ctrllog.SetLogger(logr.Discard())
	removeBin, err := racekitOnPath()
	if err != nil {
		fmt.Fprintf(os.Stderr, "scenarios: %v\n", err)
		os.Exit(1)
	}
	crds, err := race.Setup(".", race.Options{}).ReadCRDs()
	if err != nil {
		fmt.Fprintf(os.Stderr, "scenarios: %v\n", err)
		os.Exit(1)
	}
	cp, err = harness.StartControlPlane(context.Background(), harness.WithCRDs(crds))
	if err != nil {
		// Fail at once, with the reason: a missing binary says to run
		// make envtest. Never skip silently.
		fmt.Fprintf(os.Stderr, "scenarios: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := cp.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "scenarios: stop control plane: %v\n", err)
	}
	removeBin()
	os.Exit(code)
}

// TestScenarios runs every scenarios/*.txtar, in parallel; -run
// 'TestScenarios/NAME$' selects one.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := harness.CheckScript(f); err != nil {
			t.Fatal(err) // testscript would panic on it
		}
	}
	opts := options(t, "")
	opts.UpdateScripts = *update
	testscript.Run(t, params(t, opts))
}

// TestReadsFromTheTrace runs the catalogue with every assertion that the
// trace answers (the API server's last answer about the object) checked
// against a GET: the two must agree everywhere, or the trace is no
// substitute for the server.
func TestReadsFromTheTrace(t *testing.T) {
	opts := options(t, "")
	opts.VerifyReads = true
	testscript.Run(t, params(t, opts))
}

// options returns the options that race the reference controller, through
// racekit's public API, with the scenarios in this folder: the production
// controller, or the teaching variant called bug.
// params returns the testscript parameters that run scenarios with opts on
// the package's control plane, failing tb when there are none.
func params(tb testing.TB, opts harness.ScriptOptions) testscript.Params {
	tb.Helper()
	p, err := harness.Params(context.Background(), cp, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func options(tb testing.TB, bug string) harness.ScriptOptions {
	tb.Helper()
	opts, err := referenceOptions(bug)
	if err != nil {
		tb.Fatal(err)
	}
	return opts
}

func referenceOptions(bug string) (harness.ScriptOptions, error) {
	var v teaching.Variant
	if bug != "" {
		var err error
		if v, err = teaching.Lookup(bug); err != nil {
			return harness.ScriptOptions{}, err
		}
	}
	return race.Setup(".", race.Options{Bug: v}).ScriptOptions()
}
