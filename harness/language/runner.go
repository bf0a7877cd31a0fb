package language

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/racekit/racekit/harness/controlplane"
	"github.com/racekit/racekit/harness/record"
)

// Result is the outcome of one scenario run outside go test.
type Result struct {
	Name   string
	Passed bool
	// Skipped is set when the scenario skipped itself (requires): it
	// neither passed nor failed, and Log says why.
	Skipped  bool `json:",omitempty"`
	Duration time.Duration
	// Log is what testscript reported: the phases and, on failure, the
	// failing command with its file:line message.
	Log string
	// Trace is what the scenario's actors sent and received.
	Trace record.Trace
	// Failures are what went wrong, as values, in the order Log shows
	// them (failure.go): explore and other judges of a run read these,
	// not Log. A failure of testscript's own commands (exec, cmp) is only
	// in Log.
	Failures []Failure `json:",omitempty"`
	// Verdicts are what each assertion and each failure of the run
	// decided, in order (Verdict).
	Verdicts []Verdict `json:",omitempty"`
}

// RunFiles runs the scenario files opts names (opts.Files) one after
// another on cp and returns a Result for each, in order. It is how racekit
// run plays scenarios without go test; the scripts and commands are the
// same. opts.Done, if set, is still called.
func RunFiles(ctx context.Context, cp *controlplane.ControlPlane, opts Options) []Result {
	// A file testscript cannot read fails alone, with the reason, instead
	// of taking the run down with it.
	var bad []Result
	var good []string
	for _, f := range opts.Files {
		if err := CheckScript(f); err != nil {
			bad = append(bad, Result{Name: ScenarioName(f), Log: "FAIL: " + err.Error()})
			continue
		}
		good = append(good, f)
	}
	if len(good) == 0 {
		return bad
	}
	opts.Files = good
	return append(runFiles(ctx, cp, opts), bad...)
}

func runFiles(ctx context.Context, cp *controlplane.ControlPlane, opts Options) []Result {
	traces := map[string]record.Trace{}
	failures := map[string][]Failure{}
	verdicts := map[string][]Verdict{}
	lines := map[string]*scriptLines{}
	var mu sync.Mutex
	done := opts.Done
	opts.Done = func(sc *Scenario) {
		mu.Lock()
		traces[sc.Name] = sc.Trace()
		failures[sc.Name] = sc.Failures()
		verdicts[sc.Name] = sc.Verdicts()
		lines[sc.Name] = sc.run.lines
		mu.Unlock()
		if done != nil {
			done(sc)
		}
	}
	top := &resultT{}
	params, err := Params(ctx, cp, opts)
	if err != nil {
		return []Result{{Name: "scenarios", Log: "FAIL: " + err.Error()}}
	}
	// testscript removes a root it made itself; this one is ours.
	defer os.RemoveAll(params.WorkdirRoot)
	testscript.RunT(top, params)
	results := top.results
	for i := range results {
		results[i].Trace = traces[results[i].Name]
		results[i].Failures = failures[results[i].Name]
		results[i].Verdicts = verdicts[results[i].Name]
		stoppedAt(results[i].Verdicts, lines[results[i].Name], results[i].Log)
	}
	if top.failed && len(results) == 0 {
		results = append(results, Result{Name: "scenarios", Log: top.log.String()})
	}
	return results
}

// ScenarioName is the name testscript gives a file: its base name without
// the extension.
func ScenarioName(file string) string {
	return strings.TrimSuffix(strings.TrimSuffix(filepath.Base(file), ".txtar"), ".txt")
}

// resultT is a testscript.T that keeps each script's log and outcome instead
// of printing them.
type resultT struct {
	mu      sync.Mutex
	log     strings.Builder
	failed  bool
	stopped bool
	skipped bool
	results []Result
}

func (t *resultT) Log(args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintln(&t.log, args...)
}

// Error marks the script failed and keeps going, so that every message of
// the end-of-script checks is kept.
func (t *resultT) Error(args ...any) {
	t.Log(args...)
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
}

func (t *resultT) Fatal(args ...any) {
	t.Error(args...)
	t.stop()
}

func (t *resultT) FailNow() {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
	t.stop()
}

// Skip ends the script as skipped, neither passed nor failed (requires),
// with its reason in the log.
func (t *resultT) Skip(args ...any) {
	t.Log(append([]any{"SKIP:"}, args...)...)
	t.mu.Lock()
	t.skipped = true
	t.mu.Unlock()
	t.stop()
}

// stop ends the script, noting that something stopped it.
func (t *resultT) stop() {
	t.mu.Lock()
	t.stopped = true
	t.mu.Unlock()
	runtime.Goexit()
}

// Stopped reports whether the script was stopped before its end: by a
// command that failed, or by skip.
func (t *resultT) Stopped() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stopped
}

// Failed reports whether the script has failed so far.
func (t *resultT) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

func (t *resultT) Parallel()     {}
func (t *resultT) Verbose() bool { return false }

// Run runs f with a fresh resultT on its own goroutine, so that FailNow ends
// f and not the caller, and records the outcome.
func (t *resultT) Run(name string, f func(testscript.T)) {
	sub := &resultT{}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(sub)
	}()
	<-done
	t.mu.Lock()
	defer t.mu.Unlock()
	t.results = append(t.results, Result{Name: name, Passed: !sub.failed && !sub.skipped, Skipped: sub.skipped && !sub.failed, Duration: time.Since(start), Log: sub.log.String()})
}

// RunScript writes script as dir/NAME (file's base name, so that failures
// name the file the user wrote) and runs it.
func RunScript(ctx context.Context, cp *controlplane.ControlPlane, opts Options, dir, file string, script []byte) Result {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{Name: ScenarioName(file), Log: "FAIL: " + err.Error()}
	}
	path := filepath.Join(dir, filepath.Base(file))
	if err := os.WriteFile(path, script, 0o644); err != nil {
		return Result{Name: ScenarioName(file), Log: "FAIL: " + err.Error()}
	}
	opts.Dir, opts.Files, opts.UpdateScripts = "", []string{path}, false
	res := RunFiles(ctx, cp, opts)
	if len(res) != 1 {
		return Result{Name: ScenarioName(file), Log: fmt.Sprintf("FAIL: %d results for one file", len(res))}
	}
	// The run's messages name the file the user wrote, not its copy.
	local := func(s string) string { return strings.ReplaceAll(s, dir+string(filepath.Separator), "") }
	res[0].Log = local(res[0].Log)
	for i, f := range res[0].Failures {
		f.File, f.Message = local(f.File), local(f.Message)
		if f.Hook != nil {
			h := *f.Hook
			h.Armed = local(h.Armed)
			f.Hook = &h
		}
		res[0].Failures[i] = f
	}
	return res[0]
}
