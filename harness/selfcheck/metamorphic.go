package selfcheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/racekit/racekit/harness/controlplane"
	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/language"
)

// CheckNoise tests a scenario's oracles by a metamorphic relation: what
// cannot matter must not change a verdict. It runs the scenario in file on
// cp, with opts' controllers and commands, twice, each run going on past
// an assertion that does not hold so that every assertion gives its
// verdict:
//
//   - the plain run: the scenario as it is, every assertion reading an
//     object's state where it always does (the trace's last answer about
//     the object, or a GET when that may be stale);
//   - the noisy run: the scenario with noise that cannot matter (addNoise:
//     another actor that writes, watches and reads an object of a resource
//     no one else uses; each of the scenario's actors watching that
//     resource too), and every assertion reading an object's state from
//     the API server with a GET.
//
// Every verdict of the two runs must agree: each assertion's pass or
// fail, the rules each failure names (by object and rule), the failures
// that stopped the script or were found at its end, and where each was.
// In an explore scenario, where the noise stops at the explore line, so
// must each interleaving's verdict: a moment explored in one run and left
// out as equivalent in the other (a watch turns off explore's pruning for
// its actor) has the verdict of the moment explored instead.
//
// A golden trace must not change either: in the noisy run the trace
// command prints the trace without the noise's calls. A bad-input script's
// verdict is the failure it stops at: the same line, command and kind. A
// file whose archive testscript cannot read is Skipped: no line of it
// runs. The noise is PodTemplates (noise): a controller that watches,
// caches or writes them would see it, and its verdicts may change for a
// reason.
//
// The check's Differences say what differs; with any, CheckNoise runs the
// scenario twice more, with the noise alone and with the reads alone, and
// says which of the two changed which verdict.
func CheckNoise(ctx context.Context, cp *controlplane.ControlPlane, opts language.Options, file string) (*NoiseCheck, error) {
	cmds, err := language.Table(opts.Extensions, opts.Commands)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("check noise: %w", err)
	}
	nc := &NoiseCheck{File: file}
	if err := language.CheckArchive(filepath.Base(file), data); err != nil {
		nc.Skipped = err.Error()
		return nc, nil
	}
	noisy, err := addNoise(data, cmds, defaultNoise)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(file), err)
	}
	both := relation{noise: true, readServer: true}
	if why, ok := quiet[filepath.Base(file)]; ok {
		nc.Quiet, both = why, relation{readServer: true}
	}
	dir, err := os.MkdirTemp("", "racekit-noise-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cp.OnInterrupt(func() { os.RemoveAll(dir) })
	plain := relation{}.run(ctx, cp, opts, filepath.Join(dir, "plain"), file, data, noisy)
	changed := both.run(ctx, cp, opts, filepath.Join(dir, "noisy"), file, data, noisy)
	nc.Plain, nc.Noisy = plain.verdicts, changed.verdicts
	nc.Passed, nc.Log = plain.passed, plain.log
	nc.Actors = noisy.actors
	if plain.explored != nil {
		nc.PlainTable = plain.explored.Table()
	}
	if changed.explored != nil {
		nc.NoisyTable = changed.explored.Table()
	}
	nc.Differences = differences(plain, changed)
	if len(nc.Differences) == 0 || nc.Quiet != "" {
		return nc, nil
	}
	for i, alone := range []relation{{noise: true}, {readServer: true}} {
		got := alone.run(ctx, cp, opts, filepath.Join(dir, "alone"+strconv.Itoa(i)), file, data, noisy)
		verdict := "gives the plain run's verdicts"
		if d := differences(plain, got); len(d) > 0 {
			verdict = "changes them too:\n" + strings.Join(d, "\n")
		}
		nc.Differences = append(nc.Differences, fmt.Sprintf("%s alone %s", alone, verdict))
	}
	return nc, nil
}

// NoiseCheck is what CheckNoise found for one scenario.
type NoiseCheck struct {
	File string
	// Skipped says why the file was not run: testscript cannot read it.
	Skipped string `json:",omitempty"`
	// Quiet says why the scenario takes no noise (quiet): its changed
	// run reads every object's state from the API server, and that is all.
	Quiet string `json:",omitempty"`
	// Plain and Noisy are the verdicts of the two runs; the noisy run's
	// name the original's lines.
	Plain, Noisy []language.Verdict
	// Passed and Log are the plain run's: whether it passed, and what
	// testscript reported, each assertion that failed marked as one the
	// script went on past. A test that must also know how the scenario
	// ends reads them instead of running it a third time.
	Passed bool
	Log    string `json:",omitempty"`
	// Actors are the scenario's actors the noisy run had watch the
	// noise's resource.
	Actors []string `json:",omitempty"`
	// PlainTable and NoisyTable are an explore scenario's tables.
	PlainTable, NoisyTable string `json:",omitempty"`
	// Differences say how the runs' verdicts differ, and, when they do,
	// which change did it; none when the oracles held.
	Differences []string `json:",omitempty"`
}

// quiet are the scenarios that cannot take the noise, by file name, each
// with the reason: CheckNoise runs them with the reads from the API server
// alone. Keep it short: a scenario whose verdict the noise changes for no
// such reason has found a flaw in an oracle.
var quiet = map[string]string{
	"crash_after_write.txtar": "its stdout line checks that crash's message names the line of the on line that armed it, which the noise moves down",
}

// relation is what a run changes of the plain one: the noise, the reads
// from the API server, or both.
type relation struct{ noise, readServer bool }

func (r relation) String() string {
	switch {
	case r.noise && r.readServer:
		return "the noise with reads from the API server"
	case r.noise:
		return "the noise"
	case r.readServer:
		return "reading every object's state from the API server"
	}
	return "the plain run"
}

// judged is a run's verdicts, with the lines they name the original's,
// and its exploration, if it explored.
type judged struct {
	verdicts []language.Verdict
	explored *explore.Report
	// passed and log are the run's own: whether it passed, and what
	// testscript reported.
	passed bool
	log    string
	// line maps a line of the script that ran to the original's.
	line func(int) int
}

// run runs the scenario (data, or noisy with the noise) as r changes it,
// in dir, going on past assertions that fail.
func (r relation) run(ctx context.Context, cp *controlplane.ControlPlane, opts language.Options, dir, file string, data []byte, noisy noisyScript) judged {
	out := judged{line: func(n int) int { return n }}
	script := data
	if r.noise {
		script, out.line = noisy.data, noisy.line
	}
	opts.Extensions = append(slices.Clip(opts.Extensions), r.extension())
	opts.Done = func(sc *language.Scenario) {
		if rep := explore.Explored(sc); rep != nil {
			out.explored = rep
		}
	}
	res := language.RunScript(ctx, cp, opts, dir, file, script)
	out.passed, out.log = res.Passed, res.Log
	for _, v := range res.Verdicts {
		out.verdicts = append(out.verdicts, out.at(v))
	}
	return out
}

// extension is what r changes of a run, as the language's extension: the
// script goes on past assertions that fail, so that every verdict counts;
// with readServer, every read of an object's state is a GET; with the
// noise, the trace command shows the trace without the noise's calls,
// which a golden trace of the scenario must not see.
func (r relation) extension() *language.Extension {
	e := &language.Extension{Name: "metamorphic", KeepGoing: true, ReadServer: r.readServer}
	if r.noise {
		e.ShowTrace = defaultNoise.without
	}
	return e
}

// at returns v naming the original's line and the file's base name.
func (o judged) at(v language.Verdict) language.Verdict {
	if v.File != "" {
		v.File, v.Line = filepath.Base(v.File), o.line(v.Line)
	}
	return v
}

// goesOn ends the log's line for an assertion that failed in a run that
// goes on (language.Extension.KeepGoing).
const goesOn = " (an assertion: the script goes on)"

// differences says how b's verdicts differ from a's: the lines' verdicts,
// and an exploration's runs.
func differences(a, b judged) []string {
	var out []string
	if d := lineDiff(rendered(a.verdicts), rendered(b.verdicts)); d != "" {
		out = append(out, "verdicts (-plain +changed):\n"+d)
	}
	switch {
	case a.explored == nil && b.explored == nil:
	case a.explored == nil || b.explored == nil:
		out = append(out, fmt.Sprintf("one run explored and the other did not (plain: %v, changed: %v)", a.explored != nil, b.explored != nil))
	default:
		out = append(out, exploreDifferences(a, b)...)
	}
	return out
}

// rendered renders verdicts for a diff, one a line; a line of the noise
// shows as such.
func rendered(vs []language.Verdict) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		if v.File != "" && v.Line == 0 {
			v.File = ""
			out[i] = "(a line of the noise) " + v.Key()
			continue
		}
		out[i] = v.Key()
	}
	return out
}

// lineDiff renders how b differs from a, line by line: "-" for a line of a
// alone, "+" for one of b alone, and the lines both have around them; ""
// when they are the same.
func lineDiff(a, b []string) string {
	if slices.Equal(a, b) {
		return ""
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out.WriteString("    " + a[i] + "\n")
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out.WriteString("  - " + a[i] + "\n")
			i++
		default:
			out.WriteString("  + " + b[j] + "\n")
			j++
		}
	}
	return out.String()
}
