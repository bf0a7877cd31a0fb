package auto

import (
	"slices"
	"strings"

	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/harness/running"
)

// Operator is what runs on its own in the scenario: the name start or
// spawn runs it as, and the actor of its calls.
type Operator struct {
	Name, Actor string
}

// operatorNames returns the names the setup's and the workload's start and
// spawn lines run, in order, without those the setup halts again.
func operatorNames(setup []explore.Line, workload string) []string {
	var names []string
	add := func(words []string) {
		if len(words) < 2 {
			return
		}
		switch words[0] {
		case "start", "spawn":
			if !slices.Contains(names, words[1]) {
				names = append(names, words[1])
			}
		case "halt":
			names = slices.DeleteFunc(names, func(n string) bool { return n == words[1] })
		}
	}
	for _, l := range setup {
		add(strings.Fields(l.Text))
	}
	if f := strings.Fields(workload); len(f) > 0 && f[0] == "do" {
		for _, part := range strings.Split(strings.TrimPrefix(strings.TrimSpace(workload), "do"), " ; ") {
			add(strings.Fields(part))
		}
	}
	return names
}

// operatorsOf returns the operators names run as, with the actor each ran
// as in the learning run (lives).
func operatorsOf(names []string, lives []running.Life) []Operator {
	var out []Operator
	for _, n := range names {
		op := Operator{Name: n, Actor: n}
		for _, lf := range lives {
			if lf.Name == n {
				op.Actor = lf.Actor
			}
		}
		out = append(out, op)
	}
	return out
}

// watched returns the resources actor listed or watched with a 2xx answer
// in rows, in order of first call.
func watched(rows []record.Row, actor string) []string {
	var out []string
	for _, r := range rows {
		if r.Actor != actor || (r.Verb != "list" && r.Verb != "watch") || r.Code/100 != 2 || r.Service != "" {
			continue
		}
		res, _, _ := strings.Cut(r.Object, "/")
		if !slices.Contains(out, res) {
			out = append(out, res)
		}
	}
	return out
}

// eagerWatches returns the resources actor watched in rows before its
// first write, in order: the informers it starts as it starts.
func eagerWatches(rows []record.Row, actor string) []string {
	var out []string
	for _, r := range rows {
		if r.Actor != actor {
			continue
		}
		if record.WriteVerbs[r.Verb] || r.Verb == "deletecollection" {
			break
		}
		res, _, _ := strings.Cut(r.Object, "/")
		if r.Verb == "watch" && r.Code/100 == 2 && r.Service == "" && !slices.Contains(out, res) {
			out = append(out, res)
		}
	}
	return out
}
