package scenarios

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/racekit/racekit/controller/teaching"
	"github.com/racekit/racekit/harness"
)

// variantsDoc is the page TestMutations writes the matrix to.
const variantsDoc = "../docs/variants.md"

// properties says, for each teaching variant, how a failure names the
// property the variant breaks: a catching scenario's failure message must
// match it. The names in parentheses are the harness's names of the rules
// (harness/rules.go).
var properties = map[string]string{
	teaching.StaleObject:             `\(stale object\)`,
	teaching.RVPlusOne:               `\(made-up resourceVersion\)`,
	teaching.UnboundedRetry:          `\(unbounded retry\)`,
	teaching.SideEffectInRetry:       `\(side effect in retry\)`,
	teaching.StatusNoGenerationCheck: `\(status without a generation check\)`,
	teaching.RetryEverything:         `\(retry of a non-conflict\)`,
	teaching.BlindUpdate:             `the other writer's change was lost|\(blind update\)`,
	teaching.NoOwnerCheck:            `\(no owner check\)`,
	teaching.FinalizerBeforeCleanup:  `the registry holds 1 records, want 0`,
}

// TestMutations runs the catalogue (every scenario but the api_* ones,
// which do not run the controller) against each teaching variant of the
// controller, and fails unless each variant is caught: at least one
// scenario fails, with a message that names the broken property. It writes
// the variant × scenario matrix to docs/variants.md and fails when that
// page is stale; -update rewrites it. -short skips it.
//
// Its work is one subtest, matrix, so that a -run that names other
// subtests (go test ./scenarios -run '/deployment_conflict$', to run one
// scenario) leaves it out, as it leaves out the scenarios it names not.
func TestMutations(t *testing.T) {
	if testing.Short() {
		t.Skip("the mutation test runs the catalogue once per variant; skipped with -short")
	}
	t.Run("matrix", mutations)
}

// mutations is TestMutations's matrix.
func mutations(t *testing.T) {
	files, err := catalogue()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	runs := runCatalogue(files, teaching.Names())
	t.Logf("%d variants × %d scenarios in %.1fs", len(teaching.Names()), len(files), time.Since(start).Seconds())

	for _, v := range teaching.Variants() {
		want, ok := properties[v.Name()]
		if !ok {
			t.Errorf("variant %s has no entry in properties: say how a failure names the property it breaks", v.Name())
			continue
		}
		re := regexp.MustCompile(want)
		var caught, named, explored []string
		for _, f := range files {
			o := runs[outcomeKey{v.Name(), harness.ScenarioName(f)}]
			if o.passed {
				continue
			}
			if o.explored {
				explored = append(explored, o.scenario)
			}
			t.Logf("%s caught by %s: %s", v.Name(), o.scenario, o.failure)
			caught = append(caught, o.scenario)
			if re.MatchString(o.failure) {
				named = append(named, o.scenario)
			}
		}
		if len(explored) == 0 {
			t.Errorf("no explore scenario finds the teaching variant %s (%s): every interleaving of every explore_*.txtar passed against it", v.Name(), v.Summary())
		}
		switch {
		case len(caught) == 0:
			t.Errorf("no scenario catches the teaching variant %s (%s): every scenario passed against it, so nothing checks the rule %q", v.Name(), v.Summary(), v.Rule())
		case len(named) == 0:
			var msgs []string
			for _, s := range caught {
				msgs = append(msgs, s+": "+runs[outcomeKey{v.Name(), s}].failure)
			}
			t.Errorf("the teaching variant %s is caught by %s, but no failure names the broken property (want a match for %q):\n%s",
				v.Name(), strings.Join(caught, ", "), want, strings.Join(msgs, "\n"))
		}
	}

	page := renderMatrix(files, runs)
	if *update {
		if err := os.WriteFile(variantsDoc, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(variantsDoc)
	if err != nil {
		t.Fatalf("%v: run go test ./scenarios -run TestMutations -update", err)
	}
	if diff := cmp.Diff(string(old), page); diff != "" {
		t.Errorf("%s is stale: run go test ./scenarios -run TestMutations -update (-page +run)\n%s", variantsDoc, diff)
	}
}

// catalogue returns the scenarios that run the controller, sorted.
func catalogue() ([]string, error) {
	all, err := filepath.Glob("*.txtar")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range all {
		// The running_ scenarios start the production controller's
		// main (start, spawn): teaching variants are raced step by
		// step, with reconcile.
		if !strings.HasPrefix(f, "api_") && !strings.HasPrefix(f, "running_") {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scenarios")
	}
	slices.Sort(out)
	return out, nil
}

type outcomeKey struct{ variant, scenario string }

// outcome is one scenario's run against one variant.
type outcome struct {
	scenario string
	passed   bool
	// failure is the first FAIL line with the rules it names.
	failure string
	// explored is set when an explore line's interleavings failed: the
	// search, not a hand-placed hook, found the variant.
	explored bool
}

// runCatalogue runs every file against every variant, a few scenarios at a
// time, and returns the outcomes.
func runCatalogue(files, variants []string) map[outcomeKey]outcome {
	var (
		mu   sync.Mutex
		out  = map[outcomeKey]outcome{}
		wg   sync.WaitGroup
		slot = make(chan struct{}, 4*runtime.GOMAXPROCS(0))
	)
	for _, v := range variants {
		// What each scenario found, as values, by name: its failures, and
		// whether its explore line's interleavings failed.
		found := map[string]outcome{}
		parent := &catalogueT{slots: slot, wg: &wg, done: func(name string, sub *scriptT) {
			mu.Lock()
			defer mu.Unlock()
			o := found[name]
			o.scenario, o.passed = name, !sub.failed
			out[outcomeKey{v, name}] = o
		}}
		opts, err := referenceOptions(v)
		if err != nil {
			out[outcomeKey{v, "options"}] = outcome{scenario: "options", failure: err.Error()}
			continue
		}
		opts.Done = func(sc *harness.Scenario) {
			o := outcome{failure: failure(sc.Failures(), harness.Explored(sc))}
			if rep := harness.Explored(sc); rep != nil && len(rep.Failed()) > 0 {
				o.explored = true
			}
			mu.Lock()
			defer mu.Unlock()
			found[sc.Name] = o
		}
		opts.Dir, opts.Files = "", files // testscript ignores Files when Dir is set
		params, err := harness.Params(context.Background(), cp, opts)
		if err != nil {
			out[outcomeKey{v, "options"}] = outcome{scenario: "options", failure: err.Error()}
			continue
		}
		testscript.RunT(parent, params)
	}
	wg.Wait()
	return out
}

// failure renders a script's failures, each its file:line, the first line
// of what it says and the rules it names, one a line; for an explore line
// that failed, the failures of its interleavings too, as its table says
// them.
func failure(fs []harness.Failure, explored *harness.ExploreReport) string {
	var lines []string
	for _, f := range fs {
		lines = append(lines, strings.ReplaceAll(f.Summary(), "\n", " "))
	}
	if explored != nil {
		for _, il := range explored.Failed() {
			lines = append(lines, strings.ReplaceAll(il.Failure, "\n", " "))
		}
	}
	return strings.Join(lines, "\n")
}

// renderMatrix renders docs/variants.md: the variants, and which scenario
// catches which.
func renderMatrix(files []string, runs map[outcomeKey]outcome) string {
	var b strings.Builder
	b.WriteString(`# Teaching variants

<!-- generated by go test ./scenarios -run TestMutations -update; do not edit -->

Each teaching variant is a build of the reference controller that breaks one
rule of optimistic concurrency on purpose (package ` + "`controller/teaching`" + `).
` + "`racekit run --bug NAME`" + ` runs scenarios against one; the production
controller (` + "`racekit controller`" + `, ` + "`controller.New`" + `) can never be one.
TestMutations runs the whole catalogue against every variant and fails
unless each is caught by at least one scenario whose failure names the
property, so this page is what the scenarios prove.

The last column says which explore scenarios find the variant with no
hand-placed hook: some interleaving of their workload fails against it
(docs/explore.md).

| Variant | What it does wrong | Rule it breaks | A failure names it as | Found by explore |
|---|---|---|---|---|
`)
	for _, v := range teaching.Variants() {
		var found []string
		for _, f := range files {
			if o := runs[outcomeKey{v.Name(), harness.ScenarioName(f)}]; !o.passed && o.explored {
				found = append(found, fmt.Sprintf("[%s](../scenarios/%s)", o.scenario, f))
			}
		}
		if len(found) == 0 {
			found = []string{"·"}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` | %s |\n", v.Name(), v.Summary(), v.Rule(), strings.ReplaceAll(strings.ReplaceAll(properties[v.Name()], `\`, ""), "|", `\|`), strings.Join(found, ", "))
	}
	b.WriteString("\n## Which scenario catches which variant\n\n**caught**: the scenario fails against the variant; ·: it passes.\n\n| Scenario |")
	for _, v := range teaching.Names() {
		fmt.Fprintf(&b, " `%s` |", v)
	}
	b.WriteString("\n|---|")
	for range teaching.Names() {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	totals := map[string]int{}
	for _, f := range files {
		name := harness.ScenarioName(f)
		fmt.Fprintf(&b, "| [%s](../scenarios/%s) |", name, f)
		for _, v := range teaching.Names() {
			cell := "·"
			if !runs[outcomeKey{v, name}].passed {
				cell = "**caught**"
				totals[v]++
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		b.WriteString("\n")
	}
	b.WriteString("| **scenarios that catch it** |")
	for _, v := range teaching.Names() {
		fmt.Fprintf(&b, " %d |", totals[v])
	}
	b.WriteString("\n")
	return b.String()
}

// catalogueT is the testscript.T that runs a variant's scenarios: each
// script on its own goroutine, a few at a time, recorded rather than
// reported.
type catalogueT struct {
	slots chan struct{}
	wg    *sync.WaitGroup
	done  func(name string, sub *scriptT)
}

func (t *catalogueT) Run(name string, f func(testscript.T)) {
	t.wg.Add(1)
	go func() {
		t.slots <- struct{}{}
		sub := &scriptT{}
		defer func() {
			t.done(name, sub)
			<-t.slots
			t.wg.Done()
		}()
		f(sub)
	}()
}

func (t *catalogueT) Skip(args ...any)  { panic(fmt.Sprint(args...)) }
func (t *catalogueT) Fatal(args ...any) { panic(fmt.Sprint(args...)) }
func (t *catalogueT) Parallel()         {}
func (t *catalogueT) Log(args ...any)   {}
func (t *catalogueT) FailNow()          { panic("catalogue failed") }
func (t *catalogueT) Verbose() bool     { return false }

// scriptT records one script's log and outcome. FailNow and Fatal end the
// script's goroutine, as testing.T's do.
type scriptT struct {
	mu     sync.Mutex
	log    strings.Builder
	failed bool
}

func (t *scriptT) Log(args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintln(&t.log, args...)
}

func (t *scriptT) Error(args ...any) {
	t.Log(args...)
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
}

func (t *scriptT) Fatal(args ...any) {
	t.Error(args...)
	runtime.Goexit()
}

func (t *scriptT) FailNow() {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
	runtime.Goexit()
}

func (t *scriptT) Skip(args ...any) { t.Fatal(append([]any{"skipped:"}, args...)...) }

func (t *scriptT) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

func (t *scriptT) Parallel()     {}
func (t *scriptT) Verbose() bool { return false }

// Run runs an explore line's subtest (one interleaving) to its end; a
// failed one fails the script, with its log, as testing.T's would.
func (t *scriptT) Run(name string, f func(testscript.T)) {
	sub := &scriptT{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(sub)
	}()
	<-done
	if sub.Failed() {
		t.Error(name + ": " + sub.log.String())
	}
}
