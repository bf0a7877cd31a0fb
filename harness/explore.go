package harness

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/racekit/racekit/hooks"
)

// An explore scenario names a workload, the interferers to hook into it,
// and the invariants that must hold whatever the moment:
//
//	create webapp.yaml
//	explore reconcile webapps/web
//	with annotate bob deployments/web team=blue
//	with scale alice deployments/web 5
//	annotation deployments/web team=blue
//
// Explore runs the script up to the explore line and the workload alone
// (the learning run), lists every moment of the workload's calls, and runs
// the script again, in a fresh namespace, once per moment and interferer,
// with the interferer hooked at that moment: the explore line becomes
// "on MOMENT: INTERFERER", the first with line the workload. Every line
// keeps its number, so a failure names the line of the original file.

// MaxExploreDepth bounds the moments one interleaving hooks.
const MaxExploreDepth = 2

// exploreWorkers bounds the interleavings that run at once: each waits on
// the API server most of its time.
const exploreWorkers = 8

// exploration is an explore scenario, parsed.
type exploration struct {
	file  string
	ar    *txtar.Archive
	lines []string // the script, by line
	at    int      // the explore line's index in lines
	// workload is the explore line's command, as written after
	// "explore [depth=N]"; interferers are the with lines', whose
	// indexes are withAt.
	workload    string
	interferers []interferer
	withAt      []int
	depth       int
}

// builtins are testscript's own commands: after an explore line they
// would run once, in the scenario that only explores, not in each
// interleaving, so the explorer refuses them there.
var builtins = []string{"cd", "chmod", "cmp", "cmpenv", "cp", "env", "exec", "exists", "grep", "kill", "mkdir", "mv", "rm", "skip", "stderr", "stdin", "stdout", "stop", "symlink", "unix2dos", "unquote", "wait", "ttyin", "ttyout"}

// interferer is a with line: a command, hooked at one occurrence of a
// moment's call, or at every occurrence (with every ...).
type interferer struct {
	cmd   string
	every bool
}

// parseExploration reads the explore scenario in file; cmds are the
// commands its lines may name.
func parseExploration(file string, cmds map[string]*Command) (*exploration, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if err := checkArchive(filepath.Base(file), data); err != nil {
		return nil, err
	}
	e := &exploration{file: file, ar: txtar.Parse(data), at: -1, depth: 1}
	e.lines = strings.Split(string(e.ar.Comment), "\n")
	pos := func(i int) string { return fmt.Sprintf("%s:%d", filepath.Base(file), i+1) }
	for i, line := range e.lines {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch {
		case f[0] == "explore" && e.at >= 0:
			return nil, fmt.Errorf("%s: a second explore line; a scenario explores one workload (the first is at line %d)", pos(i), e.at+1)
		case f[0] == "explore":
			e.at = i
			rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "explore"))
			if d, after, ok := strings.Cut(rest, " "); ok && strings.HasPrefix(d, "depth=") {
				n, err := strconv.Atoi(strings.TrimPrefix(d, "depth="))
				if err != nil || n < 1 || n > MaxExploreDepth {
					return nil, fmt.Errorf("%s: bad %q: want depth=1 or depth=2", pos(i), d)
				}
				e.depth, rest = n, strings.TrimSpace(after)
			}
			if rest == "" {
				return nil, fmt.Errorf("%s: explore names no workload: want explore [depth=N] COMMAND ARGS..., such as explore reconcile webapps/web", pos(i))
			}
			wf := strings.Fields(rest)
			c, ok := cmds[wf[0]]
			switch {
			case wf[0] == "!":
				return nil, fmt.Errorf("%s: the workload cannot be negated: an interleaving in which it fails fails; use settle for a workload that may be refused and retried", pos(i))
			case !ok:
				return nil, fmt.Errorf("%s: unknown workload command %q%s", pos(i), wf[0], suggest(wf[0], commandNames(cmds)))
			case c.Group == "assert" || c.Group == "run" || wf[0] == "explore" || wf[0] == "with" || wf[0] == "on":
				return nil, fmt.Errorf("%s: %s cannot be a workload: a workload is a reconcile, a settle or a writer command", pos(i), wf[0])
			}
			e.workload = rest
		case f[0] == "with" && (e.at < 0 || len(e.withAt) > 0 && e.withAt[len(e.withAt)-1] != prevCommand(e.lines, i)):
			return nil, fmt.Errorf("%s: a with line belongs right under an explore line (or another with line)", pos(i))
		case f[0] == "with":
			if e.withAt == nil && prevCommand(e.lines, i) != e.at {
				return nil, fmt.Errorf("%s: a with line belongs right under an explore line (or another with line)", pos(i))
			}
			in := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "with"))
			every := false
			if rest, ok := strings.CutPrefix(in, "every "); ok {
				in, every = strings.TrimSpace(rest), true
			}
			if in == "" {
				return nil, fmt.Errorf("%s: with names no interferer: want with COMMAND ARGS..., such as with annotate bob deployments/web team=blue", pos(i))
			}
			name := strings.Fields(in)[0]
			if name == "!" {
				name = strings.Fields(in)[1]
			}
			c, ok := cmds[name]
			switch {
			case !ok:
				return nil, fmt.Errorf("%s: unknown interferer command %q%s", pos(i), name, suggest(name, commandNames(cmds)))
			case !c.Hookable:
				return nil, fmt.Errorf("%s: %s cannot interfere: an interferer runs as a hook's action, and these can: %s", pos(i), name, strings.Join(hookable(cmds), ", "))
			}
			e.interferers = append(e.interferers, interferer{cmd: in, every: every})
			e.withAt = append(e.withAt, i)
		case e.at >= 0 && contains(builtins, f[0]):
			return nil, fmt.Errorf("%s: %s is testscript's own command; under an explore line only racekit's commands check the invariants, in every interleaving", pos(i), f[0])
		}
	}
	switch {
	case e.at < 0:
		return nil, fmt.Errorf("%s: no explore line", filepath.Base(file))
	case len(e.interferers) == 0:
		return nil, fmt.Errorf("%s: explore has no with line: name at least one interferer, such as with annotate bob deployments/web team=blue", pos(e.at))
	}
	return e, nil
}

// prevCommand returns the index of the last line before i that is not
// blank or a comment, or -1.
func prevCommand(lines []string, i int) int {
	for j := i - 1; j >= 0; j-- {
		f := strings.Fields(lines[j])
		if len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			return j
		}
	}
	return -1
}

func commandNames(cmds map[string]*Command) []string {
	var out []string
	for n := range cmds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func hookable(cmds map[string]*Command) []string {
	var out []string
	for _, c := range sortCommands(cmds) {
		if c.Hookable {
			out = append(out, c.Name)
		}
	}
	return out
}

// script returns the scenario with the explore line and its with lines
// replaced by heads (hook lines, or the learning run's marker) followed by
// the workload, each on a line of its own. The lines after keep their
// numbers when there are slots enough; without invariants, they become
// comments (the learning run).
func (e *exploration) script(heads []string, invariants bool) []byte {
	lines := append([]string(nil), e.lines...)
	if !invariants {
		last := e.at
		if n := len(e.withAt); n > 0 {
			last = e.withAt[n-1]
		}
		for i := last + 1; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) != "" {
				lines[i] = "# " + strings.TrimSpace(lines[i])
			}
		}
	}
	content := append(append([]string(nil), heads...), e.workload)
	slots := append([]int{e.at}, e.withAt...)
	for _, s := range slots {
		lines[s] = "# " + strings.TrimSpace(lines[s])
	}
	if len(content) <= len(slots) {
		for i, c := range content {
			lines[slots[i]] = c
		}
	} else {
		lines[e.at] = strings.Join(content, "\n")
	}
	return txtar.Format(&txtar.Archive{Comment: []byte(strings.Join(lines, "\n")), Files: e.ar.Files})
}

// Moment is a point of the workload's run where an interferer can be
// hooked: before one of its calls is sent, or after its answer arrives.
type Moment struct {
	Point  string // before or after
	Actor  string
	Verb   string
	Object string // as the trace names it: deployments/web/status
	Occ    int    // the call's occurrence among the workload's calls like it
}

// Trigger renders m as the left side of an on command.
func (m Moment) Trigger() string {
	return fmt.Sprintf("%s %s %s %s %s", m.Point, m.Actor, m.Verb, m.Object, hooks.Ordinal(m.Occ))
}

var notName = regexp.MustCompile(`[^a-zA-Z0-9-]+`)

// Name is m as a subtest name: after_controller_get_deployments_web_1st.
func (m Moment) Name() string {
	return strings.Trim(notName.ReplaceAllString(m.Trigger(), "_"), "_")
}

// Hook is one interferer at one moment: at the moment's call, or, with
// Every, at that call and every later one like it (a writer that keeps
// writing).
type Hook struct {
	Moment     Moment
	Interferer string
	Every      bool
}

// Trigger renders the left side of h's on command.
func (h Hook) Trigger() string {
	if h.Every {
		m := h.Moment
		return fmt.Sprintf("%s %s %s %s every", m.Point, m.Actor, m.Verb, m.Object)
	}
	return h.Moment.Trigger()
}

// Line renders h as the on command that arms it.
func (h Hook) Line() string { return "on " + h.Trigger() + ": " + h.Interferer }

// Interleaving is the outcome of one run with hooks at their moments.
type Interleaving struct {
	// Index is the run's place among all of the exploration's runs, shards
	// or not: the order of the moments, then the interferers.
	Index int
	Name  string
	Hooks []Hook
	// Passed is true when every invariant held; NotApplicable when a
	// later hook's moment never came (depth 2: an earlier interferer
	// took the workload down another path).
	Passed, NotApplicable bool
	// Failure is the first FAIL line, with the rules it names.
	Failure string
	// Conflicts counts the 409 Conflict answers in the run.
	Conflicts int
	Log       string
	// Trace is the run's trace, and Script the scenario that ran: the
	// original, with the explore line replaced by the hooks and the
	// workload. Neither is in the JSON form.
	Trace  Trace  `json:"-"`
	Script []byte `json:"-"`
}

// ExploreReport is what Explore found.
type ExploreReport struct {
	File     string
	Workload string
	Depth    int
	// Moments are the distinct moments of the learning run; Equivalent
	// counts those left out as equal to one of them.
	Moments    []Moment
	Equivalent int
	// Total counts the exploration's runs; Interleavings holds those this
	// report ran (all of them, or a shard's), in the order of the moments,
	// then interferers.
	Total         int
	Interleavings []Interleaving
	// Shard is "I/N" for a shard's report, "" for a whole one.
	Shard string `json:",omitempty"`
	// Selected says which runs were selected by name, such as "-run
	// after_controller_get", "" for all of them.
	Selected string `json:",omitempty"`
	// Learning is the learning run's trace from the workload's first call
	// on, as rows: the calls whose moments Moments lists, for drawing the
	// workload (Mermaid).
	Learning []Row `json:",omitempty"`
}

// Failed returns the interleavings whose invariants broke.
func (r *ExploreReport) Failed() []Interleaving {
	var out []Interleaving
	for _, il := range r.Interleavings {
		if !il.Passed && !il.NotApplicable {
			out = append(out, il)
		}
	}
	return out
}

// errLearning is returned, wrapped, when the workload alone fails.
var errLearning = errors.New("the learning run failed")

// ExploreOptions tunes Explore.
type ExploreOptions struct {
	// Depth overrides the explore line's depth=N; 0 keeps it.
	Depth int
	// Progress, if set, is called after each interleaving ends, with how
	// many have ended, of how many, and how many failed so far; calls are
	// serialized.
	Progress func(done, total, failed int)
	// Shard, if N is set, runs the runs of shard I of N (1 ≤ I ≤ N): a split
	// by each run's name, the same on every machine, so that N processes,
	// anywhere, run every run once between them (Merge joins them).
	Shard struct{ I, N int }
	// Select, if set, runs only the runs whose names it accepts, such as
	// those go test -run names (cmd_explore.go); Selected says how, for
	// the report.
	Select   func(name string) bool
	Selected string
}

// inShard reports whether the run called name belongs to shard i of n.
func inShard(name string, i, n int) bool {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32()%uint32(n)) == i-1
}

// Explore explores the scenario in file on cp with opts' controllers and
// commands: a learning run, then one run per moment and interferer, at
// most exploreWorkers at a time, each in a namespace of its own.
func Explore(ctx context.Context, cp *ControlPlane, opts ScriptOptions, file string, xo ExploreOptions) (*ExploreReport, error) {
	depth := xo.Depth
	_, cmds, err := opts.registry()
	if err != nil {
		return nil, err
	}
	e, err := parseExploration(file, cmds)
	if err != nil {
		return nil, err
	}
	if depth > 0 {
		if depth > MaxExploreDepth {
			return nil, fmt.Errorf("depth %d: racekit explores at most depth %d", depth, MaxExploreDepth)
		}
		e.depth = depth
	}
	dir, err := os.MkdirTemp("", "racekit-explore-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// An interrupted run exits without running defers.
	cp.OnInterrupt(func() { os.RemoveAll(dir) })
	rep := &ExploreReport{File: file, Workload: e.workload, Depth: e.depth}

	// The learning run: the workload alone, behind a marker that notes
	// where its calls start.
	var from int
	var learned Trace
	lopts := opts
	lopts.Done = func(sc *Scenario) {
		sc.mu.Lock()
		from = sc.exploreFrom
		sc.mu.Unlock()
		learned = sc.Trace()
	}
	res := runScript(ctx, cp, lopts, filepath.Join(dir, "learn"), e.file, e.script([]string{"explore-from"}, false))
	if !res.Passed {
		return nil, fmt.Errorf("%w: the script up to the workload, and the workload alone, with no interferer, fail:\n%s", errLearning, res.Log)
	}
	var equivalent int
	rep.Moments, equivalent = moments(learned, from)
	rep.Equivalent = equivalent
	for _, r := range learned.Rows() {
		if r.Seq > from {
			rep.Learning = append(rep.Learning, r)
		}
	}
	if len(rep.Moments) == 0 {
		return nil, fmt.Errorf("%s:%d: the workload %q made no call: there is no moment to explore", filepath.Base(file), e.at+1, e.workload)
	}
	var singles []Hook
	for _, in := range e.interferers {
		seen := map[string]bool{}
		for _, m := range rep.Moments {
			h := Hook{Moment: m, Interferer: in.cmd, Every: in.every}
			// Every occurrence from the first on is every occurrence.
			if in.every && seen[h.Trigger()] {
				continue
			}
			seen[h.Trigger()] = true
			singles = append(singles, h)
		}
	}
	sort.SliceStable(singles, func(i, j int) bool {
		return momentIndex(rep.Moments, singles[i].Moment) < momentIndex(rep.Moments, singles[j].Moment)
	})
	var runs [][]Hook
	if e.depth == 1 {
		for _, h := range singles {
			runs = append(runs, []Hook{h})
		}
	} else {
		if len(singles) < 2 {
			return nil, fmt.Errorf("%s:%d: depth %d needs at least %d moments and interferers, and the workload has %d", filepath.Base(file), e.at+1, e.depth, e.depth, len(singles))
		}
		for i := range singles {
			for j := i + 1; j < len(singles); j++ {
				runs = append(runs, []Hook{singles[i], singles[j]})
			}
		}
	}
	if n := xo.Shard.N; n > 0 && (xo.Shard.I < 1 || xo.Shard.I > n) {
		return nil, fmt.Errorf("shard %d/%d: want I/N with 1 ≤ I ≤ N", xo.Shard.I, n)
	}
	rep.Total = len(runs)
	type run struct {
		index int
		hooks []Hook
	}
	var todo []run
	for i, hs := range runs {
		name := runName(hs, len(e.interferers) > 1)
		if (xo.Shard.N == 0 || inShard(name, xo.Shard.I, xo.Shard.N)) && (xo.Select == nil || xo.Select(name)) {
			todo = append(todo, run{i, hs})
		}
	}
	if xo.Shard.N > 0 {
		rep.Shard = fmt.Sprintf("%d/%d", xo.Shard.I, xo.Shard.N)
	}
	rep.Selected = xo.Selected
	rep.Interleavings = make([]Interleaving, len(todo))
	var progress sync.Mutex
	done, failed := 0, 0
	var wg sync.WaitGroup
	slots := make(chan struct{}, exploreWorkers)
	for i, r := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			il := interleave(ctx, cp, opts, e, filepath.Join(dir, strconv.Itoa(r.index)), r.hooks, len(e.interferers) > 1)
			il.Index = r.index
			rep.Interleavings[i] = il
			progress.Lock()
			defer progress.Unlock()
			done++
			if !il.Passed && !il.NotApplicable {
				failed++
			}
			if xo.Progress != nil {
				xo.Progress(done, len(todo), failed)
			}
		}()
	}
	wg.Wait()
	if err := interfererFails(e, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// ownFailure matches the failure of a hook's action itself.
var ownFailure = regexp.MustCompile(`hook \d+ \(.*\), armed at \S+, failed: (.*)`)

// interfererFails reports an interferer whose action fails in every
// interleaving it ran in, for reasons of its own (a typo, a forbidden
// call): that is the scenario's mistake, said once, not a race found at
// every moment.
func interfererFails(e *exploration, rep *ExploreReport) error {
	for _, in := range e.interferers {
		var why string
		runs, own := 0, 0
		for _, il := range rep.Interleavings {
			if len(il.Hooks) != 1 || il.Hooks[0].Interferer != in.cmd {
				continue
			}
			runs++
			if m := ownFailure.FindStringSubmatch(il.Log); m != nil && !il.Passed {
				own++
				why = m[1]
			}
		}
		if runs > 0 && own == runs {
			return fmt.Errorf("%s:%d: the interferer %q fails on its own in every interleaving, so explore found no race: %s",
				filepath.Base(e.file), e.withAt[slices.Index(e.interferers, in)]+1, in.cmd, why)
		}
	}
	return nil
}

// runName names the run with hs armed, as its subtest: its moments, and
// each interferer's first words when there are several.
func runName(hs []Hook, nameInterferer bool) string {
	var names []string
	for _, h := range hs {
		n := h.Moment.Name()
		if h.Every {
			n = strings.Trim(notName.ReplaceAllString(h.Trigger(), "_"), "_")
		}
		if nameInterferer {
			f := strings.Fields(h.Interferer)
			n += "_" + strings.Trim(notName.ReplaceAllString(strings.Join(f[:min(2, len(f))], "_"), "_"), "_")
		}
		names = append(names, n)
	}
	return strings.Join(names, "+")
}

// interleave runs e with hs armed.
func interleave(ctx context.Context, cp *ControlPlane, opts ScriptOptions, e *exploration, dir string, hs []Hook, nameInterferer bool) Interleaving {
	il := Interleaving{Hooks: hs, Name: runName(hs, nameInterferer)}
	var heads []string
	for _, h := range hs {
		heads = append(heads, h.Line())
	}
	il.Script = e.script(heads, true)
	opts.Done = nil
	res := runScript(ctx, cp, opts, dir, e.file, il.Script)
	il.Passed, il.Log, il.Trace = res.Passed, res.Log, res.Trace
	for _, x := range res.Trace.Exchanges() {
		if isConflict(x.Code, x.Reason) {
			il.Conflicts++
		}
	}
	if !il.Passed {
		il.Failure = failureOf(res.Log)
		il.NotApplicable = len(hs) > 1 && onlyUnfired(res.Log)
	}
	return il
}

// onlyUnfired reports whether every failure in log is a hook that never
// fired: at depth 2, an earlier interferer took the workload down a path on
// which the later moment never comes, and the pair does not apply.
func onlyUnfired(log string) bool {
	n := 0
	for _, line := range strings.Split(log, "\n") {
		if m := failureLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			if !strings.Contains(m[1], "never fired") {
				return false
			}
			n++
		}
	}
	return n > 0
}

// failureLine and ruleLine find what a failed run reports.
var (
	failureLine = regexp.MustCompile(`^FAIL: (.*)$`)
	ruleLine    = regexp.MustCompile(`^\s*rule broken: `)
)

// failureOf returns the first FAIL line of log, without its path, with
// the rules broken that follow it.
func failureOf(log string) string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		t := strings.TrimSpace(line)
		if m := failureLine.FindStringSubmatch(t); m != nil && len(out) == 0 {
			msg := m[1]
			if i := strings.LastIndex(msg[:min(len(msg), strings.Index(msg+" ", " "))], "/"); i >= 0 {
				msg = msg[i+1:]
			}
			out = append(out, msg)
			continue
		}
		if len(out) > 0 && ruleLine.MatchString(line) {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n")
}

// runScript writes script as dir/NAME (file's base name, so that failures
// name the file the user wrote) and runs it.
func runScript(ctx context.Context, cp *ControlPlane, opts ScriptOptions, dir, file string, script []byte) Result {
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
	res[0].Log = strings.ReplaceAll(res[0].Log, dir+string(filepath.Separator), "")
	return res[0]
}

// moments lists the distinct moments of the calls after seq from in tr:
// before each call, and after each answer. After one call and before the
// next call of the same actor, with no other call in between, are one
// moment (the after one is kept): nothing the actor can observe happens
// between them. That holds only for an actor that reads from the API
// server: a cached controller reads its cache in between, so for an actor
// that watches, both are kept. Watches are no moments.
func moments(tr Trace, from int) ([]Moment, int) {
	xs := tr.Exchanges()
	watching := map[string]bool{}
	for _, x := range xs {
		if x.Verb == "watch" {
			watching[x.Actor] = true
		}
	}
	occ := map[string]int{}
	var out []Moment
	equivalent := 0
	var prev *Exchange
	lastSeq := from
	for _, x := range xs {
		if x.Seq <= from || x.Verb == "watch" {
			if x.Seq > from {
				lastSeq = x.Seq
			}
			continue
		}
		key := x.Actor + " " + x.Verb + " " + x.Object()
		occ[key]++
		m := Moment{Actor: x.Actor, Verb: x.Verb, Object: x.Object(), Occ: occ[key]}
		before, after := m, m
		before.Point, after.Point = "before", "after"
		if prev != nil && prev.Actor == x.Actor && x.Seq == lastSeq+1 && !watching[x.Actor] {
			equivalent++
		} else {
			out = append(out, before)
		}
		out = append(out, after)
		prev, lastSeq = x, x.Seq
	}
	return out, equivalent
}

// momentIndex returns m's place in ms, for ordering interleavings by
// moment.
func momentIndex(ms []Moment, m Moment) int {
	for i, x := range ms {
		if x == m {
			return i
		}
	}
	return len(ms)
}

// Merge joins the reports of an exploration's shards into the report of
// the whole: each run once, in order. The shards must come from one
// exploration (the same file, workload, depth and moments) and cover every
// run exactly once.
func Merge(shards ...*ExploreReport) (*ExploreReport, error) {
	if len(shards) == 0 {
		return nil, errors.New("merge: no report")
	}
	first := shards[0]
	out := &ExploreReport{File: first.File, Workload: first.Workload, Depth: first.Depth, Moments: first.Moments, Equivalent: first.Equivalent, Total: first.Total}
	seen := map[int]string{}
	for _, r := range shards {
		switch {
		case filepath.Base(r.File) != filepath.Base(first.File) || r.Workload != first.Workload || r.Depth != first.Depth || r.Total != first.Total || !slices.Equal(r.Moments, first.Moments):
			return nil, fmt.Errorf("merge: shard %s explored %s (%s, depth %d, %d runs), not %s (%s, depth %d, %d runs) as shard %s did",
				orWhole(r.Shard), filepath.Base(r.File), r.Workload, r.Depth, r.Total, filepath.Base(first.File), first.Workload, first.Depth, first.Total, orWhole(first.Shard))
		}
		for _, il := range r.Interleavings {
			if prev, dup := seen[il.Index]; dup {
				return nil, fmt.Errorf("merge: run %s is in shard %s and in shard %s", il.Name, prev, orWhole(r.Shard))
			}
			seen[il.Index] = orWhole(r.Shard)
			out.Interleavings = append(out.Interleavings, il)
		}
	}
	if len(out.Interleavings) != out.Total {
		var missing []string
		for i := 0; i < out.Total; i++ {
			if _, ok := seen[i]; !ok {
				missing = append(missing, strconv.Itoa(i))
			}
		}
		return nil, fmt.Errorf("merge: the shards ran %d of %d runs; missing: %s", len(out.Interleavings), out.Total, strings.Join(missing, ", "))
	}
	sort.Slice(out.Interleavings, func(i, j int) bool { return out.Interleavings[i].Index < out.Interleavings[j].Index })
	return out, nil
}

func orWhole(shard string) string {
	if shard == "" {
		return "(whole)"
	}
	return shard
}
