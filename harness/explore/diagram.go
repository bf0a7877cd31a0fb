package explore

import "github.com/racekit/racekit/harness/record"

// Outcome is an interleaving's outcome, as the HTML page colours it.
type Outcome string

// The outcomes, and the mark of a moment left out as racing, which is a
// claim the page shows, not a verdict.
const (
	OutcomePass   Outcome = "pass"
	OutcomeFail   Outcome = "fail"
	OutcomeNA     Outcome = "na"
	OutcomeRacing Outcome = "racing"
)

// OutcomeOf returns il's outcome.
func OutcomeOf(il Interleaving) Outcome {
	switch {
	case il.NotApplicable:
		return OutcomeNA
	case !il.Passed:
		return OutcomeFail
	}
	return OutcomePass
}

// Label returns the outcome as the table's outcome column says it.
func (o Outcome) Label() string {
	return map[Outcome]string{OutcomePass: "pass", OutcomeFail: "FAIL", OutcomeNA: "n/a"}[o]
}

// OutcomeColors colour a moment's mark in the workload's diagram: the
// amber of a claim to check for a racing moment.
var OutcomeColors = map[Outcome]string{
	OutcomePass:   "rgb(200, 230, 201)",
	OutcomeFail:   "rgb(255, 205, 210)",
	OutcomeNA:     "rgb(224, 224, 224)",
	OutcomeRacing: "rgb(255, 236, 179)",
}

// MarkedDiagram draws the learning run as Mermaid, with a note at each
// explored moment, coloured by the worst outcome of the runs hooked there
// (a failure, else a pass, else n/a), and one at each moment left out as
// racing, which says what it races with.
func (r *Report) MarkedDiagram() string {
	outcome, label := map[string]Outcome{}, map[string]string{}
	for _, rc := range r.Racing {
		outcome[rc.Moment.Trigger()], label[rc.Moment.Trigger()] = OutcomeRacing, rc.LeftOut()
	}
	for _, il := range r.Interleavings {
		o := OutcomeOf(il)
		for _, h := range il.Hooks {
			t := h.Moment.Trigger()
			if prev := outcome[t]; prev == OutcomeFail || prev == OutcomePass && o == OutcomeNA {
				continue
			}
			outcome[t] = o
		}
	}
	occ := map[string]int{}
	return record.MermaidMarked(r.Learning, func(row record.Row, point string) []record.Mark {
		key := row.Actor + " " + row.Verb + " " + row.Object
		if point == "before" {
			occ[key]++
		}
		m := Moment{Point: point, Actor: row.Actor, Verb: row.Verb, Object: row.Object, Occ: occ[key]}
		o, ok := outcome[m.Trigger()]
		if !ok {
			return nil
		}
		text, ok := label[m.Trigger()]
		if !ok {
			text = o.Label()
		}
		return []record.Mark{{Color: OutcomeColors[o], Text: m.Trigger() + ": " + text}}
	})
}
