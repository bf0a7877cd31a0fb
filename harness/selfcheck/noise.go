package selfcheck

import (
	"fmt"
	"slices"
	"strings"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"

	"github.com/rogpeppe/go-internal/txtar"
)

// noise is what CheckNoise adds to a scenario (addNoise): calls that no
// verdict may depend on, by an actor and on a resource that no scenario
// and no controller uses. PodTemplates are inert in a control plane
// without a controller manager: no controller of racekit's, its examples
// or its tests caches, watches, lists or writes them, no admission plugin
// reads them (a ResourceQuota or a LimitRange would change what the API
// server admits), and a scenario's own lists and watches name a resource
// of their own. The noise's writes do move the store's revision, which a
// list's resourceVersion is, as other scenarios' writes do all the time:
// a list at such a revision from another resource's watch cache waits
// until that cache has heard of it (scenarios/api_list_rv.txtar and the
// watch scenarios take the noise).
type noise struct {
	actor    string // who makes the noise: noise
	resource string // what it writes and reads: podtemplates
	object   string // the one object it writes: racekit-noise
	file     string // the archive file that holds the object
}

// defaultNoise is the noise CheckNoise adds.
var defaultNoise = &noise{actor: "noise", resource: "podtemplates", object: "racekit-noise", file: "racekit-noise.yaml"}

// manifest is the noise's object.
func (n *noise) manifest() string {
	return fmt.Sprintf(`apiVersion: v1
kind: PodTemplate
metadata:
  name: %s
template:
  metadata:
    labels:
      app: %s
  spec:
    containers:
    - name: noise
      image: busybox
`, n.object, n.object)
}

// isNoise reports whether x is one of the noise's calls: the noise actor's,
// or anyone's on the noise's resource (the scenario's actors' watches).
func (n *noise) isNoise(x *record.Exchange) bool {
	return x.Actor == n.actor || x.Resource == n.resource
}

// without returns t without the noise's calls, the rest numbered again
// from 1: the trace the scenario would have had without the noise, which
// the trace command prints in a noisy run, so that a golden trace is a
// verdict noise must not change either.
func (n *noise) without(t record.Trace) record.Trace {
	out := make(record.Trace, 0, len(t))
	seq := 0
	for _, e := range t {
		if e.Exchange != nil {
			if n.isNoise(e.Exchange) {
				continue
			}
			x := *e.Exchange
			seq++
			x.Seq = seq
			e.Exchange = &x
		}
		out = append(out, e)
	}
	return out
}

// noisyScript is a scenario with noise added (addNoise), and for each line
// of its script the line of the original it is (origin[i] for line i+1),
// 0 for a line of noise: failures and verdicts name the original's lines.
type noisyScript struct {
	data   []byte
	origin []int
	// actors are the scenario's actors that watch the noise's resource.
	actors []string
}

// line returns the original line of the noisy script's line n, 0 for a
// line of noise or one past the script.
func (s noisyScript) line(n int) int {
	if n < 1 || n > len(s.origin) {
		return 0
	}
	return s.origin[n-1]
}

// addNoise returns the scenario script (a txtar archive) with noise that
// must change no verdict, three kinds at once:
//
//   - another actor (n.actor) applies an object of a resource no one else
//     uses (n.resource), watches that resource, and, before each line of
//     the script, patches, reads or lists it in turn: another object
//     created and patched, another actor watching and reading;
//   - each actor of the scenario that makes calls watches that resource,
//     which it never writes, from the start; an actor the scenario
//     declares (actor NAME user=...) is left out, since RBAC may refuse
//     it, and so are actors that assertions name alone (referee alice of
//     an alice who made no call must still fail);
//   - nothing of the scenario's own changes, and no line moves but down.
//
// In an explore scenario the noise stops at the explore line: the lines
// after it are the explorer's workload, interferers and invariants. No
// noise comes between a line and the stdout, stderr or cmp line that
// reads what it printed. cmds are the commands the script may name.
func addNoise(script []byte, cmds map[string]*language.Command, n *noise) (noisyScript, error) {
	ar := txtar.Parse(script)
	for _, f := range ar.Files {
		if f.Name == n.file {
			return noisyScript{}, fmt.Errorf("the scenario has a file %s of its own, which the noise would replace", n.file)
		}
	}
	lines := strings.Split(string(ar.Comment), "\n")
	actors, declared := scriptActors(lines, cmds)
	if slices.Contains(actors, n.actor) || declared[n.actor] {
		return noisyScript{}, fmt.Errorf("the scenario has an actor %s of its own, whom the noise would be", n.actor)
	}
	var out noisyScript
	add := func(line string, origin int) {
		out.data = append(out.data, line+"\n"...)
		out.origin = append(out.origin, origin)
	}
	add("apply "+n.actor+" "+n.file, 0)
	add("watch "+n.actor+" "+n.resource+" "+n.object+"-w", 0)
	for _, a := range actors {
		if !declared[a] {
			add("watch "+a+" "+n.resource+" "+n.object+"-w-"+a, 0)
			out.actors = append(out.actors, a)
		}
	}
	explored := false
	k := 0
	for i, line := range lines {
		if i == len(lines)-1 && line == "" {
			break // the comment's last newline
		}
		words := commandWords(line)
		if len(words) > 0 && words[0] == "explore" {
			explored = true
		}
		if len(words) > 0 && !explored && !readsOutput(words) {
			add(n.op(k), 0)
			k++
		}
		add(line, i+1)
	}
	ar.Comment = out.data
	ar.Files = append(ar.Files, txtar.File{Name: n.file, Data: []byte(n.manifest())})
	out.data = txtar.Format(ar)
	return out, nil
}

// op returns the k-th line of noise between the script's lines: a patch of
// the noise's object, a read of it, a list of its resource, in turn.
func (n *noise) op(k int) string {
	switch k % 3 {
	case 0:
		return fmt.Sprintf(`patch %s %s/%s merge '{"metadata":{"annotations":{"racekit.dev/noise":"%d"}}}'`, n.actor, n.resource, n.object, k/3+1)
	case 1:
		return fmt.Sprintf("get %s %s/%s %s", n.actor, n.resource, n.object, n.object)
	}
	return fmt.Sprintf("list %s %s %s-list", n.actor, n.resource, n.object)
}

// commandWords returns the words of a script line's command, without a
// leading "!" or "?" and [condition]s; none for a blank line or a comment.
func commandWords(line string) []string {
	words := strings.Fields(line)
	for len(words) > 0 && (words[0] == "!" || words[0] == "?" || strings.HasPrefix(words[0], "[")) {
		words = words[1:]
	}
	if len(words) == 0 || strings.HasPrefix(words[0], "#") {
		return nil
	}
	return words
}

// readsOutput reports whether a line's command reads what the line before
// printed, so that nothing may come between them.
func readsOutput(words []string) bool {
	switch words[0] {
	case "stdout", "stderr":
		return true
	case "cmp", "cmpenv":
		return len(words) > 1 && (words[1] == "stdout" || words[1] == "stderr")
	}
	return false
}

// scriptActors returns the actors that make calls in the script's lines,
// in order of first use, and those an actor line declares.
func scriptActors(lines []string, cmds map[string]*language.Command) ([]string, map[string]bool) {
	var actors []string
	declared := map[string]bool{}
	for _, line := range lines {
		words := commandWords(line)
		if len(words) >= 2 && words[0] == "actor" {
			declared[words[1]] = true
			continue
		}
		for _, a := range callers(words, cmds) {
			if language.ValidActor(a) && !slices.Contains(actors, a) {
				actors = append(actors, a)
			}
		}
	}
	return actors, declared
}

// callers returns the actors a command's words make calls as: the ACTOR
// of a writer's usage, the actor of "as ACTOR" (the controller actor
// without it) for a command that takes one, spawn's NAME, create's setup
// actor; and those of the command a hook, an interferer, try or repeat
// runs. An assertion's actors make no call by being named.
func callers(words []string, cmds map[string]*language.Command) []string {
	if len(words) > 0 && words[0] == "!" {
		words = words[1:]
	}
	if len(words) == 0 {
		return nil
	}
	switch words[0] {
	case "on":
		for i, w := range words {
			if strings.HasSuffix(w, ":") {
				return callers(words[i+1:], cmds)
			}
		}
		return nil
	case "with":
		if len(words) > 1 && words[1] == "every" {
			return callers(words[2:], cmds)
		}
		return callers(words[1:], cmds)
	case "explore":
		if len(words) > 1 && strings.HasPrefix(words[1], "depth=") {
			return callers(words[2:], cmds)
		}
		return callers(words[1:], cmds)
	case "try":
		return callers(words[1:], cmds)
	case "repeat":
		if len(words) > 2 {
			return callers(words[2:], cmds)
		}
		return nil
	case "spawn":
		if len(words) > 1 {
			return []string{words[1]}
		}
		return nil
	case "create":
		return []string{language.SetupActor}
	}
	c, ok := cmds[words[0]]
	if !ok || c.Group == "assert" || c.Group == "run" && c.Name != "start" {
		return nil
	}
	var out []string
	for i, tok := range strings.Fields(c.Args) {
		if tok == "ACTOR" && i+1 < len(words) {
			out = append(out, words[i+1])
		}
	}
	if strings.Contains(c.Args, "[as ACTOR]") {
		as := language.ControllerActor
		if i := slices.Index(words, "as"); i > 0 && i+1 < len(words) {
			as = words[i+1]
		}
		out = append(out, as)
	}
	return out
}
