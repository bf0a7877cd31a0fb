package referee

import (
	"fmt"
	"strings"
)

// Named are the rules a failure names: each rule once per object, in the
// order first found, with how often it was broken.
type Named struct {
	findings []Finding
	counts   []int
}

// Name names the rules of fs about object ("" for all).
func Name(fs []Finding, object string) Named {
	type key struct{ object, rule string }
	at := map[key]int{}
	var n Named
	for _, f := range fs {
		if object != "" && f.Object != object {
			continue
		}
		k := key{f.Object, f.Rule}
		i, ok := at[k]
		if !ok {
			i = len(n.findings)
			at[k] = i
			n.findings = append(n.findings, f)
			n.counts = append(n.counts, 0)
		}
		n.counts[i]++
	}
	return n
}

// Lines renders each named rule as a failure message says it after
// "rule broken: ", with how often it was broken.
func (n Named) Lines() []string {
	out := make([]string, len(n.findings))
	for i, f := range n.findings {
		out[i] = f.String()
		switch c := n.counts[i]; {
		case c == 2:
			out[i] += "; and once more"
		case c > 2:
			out[i] += fmt.Sprintf("; and %d more times", c-1)
		}
	}
	return out
}

// String renders the named rules as lines to add to a failure message;
// "" when there are none.
func (n Named) String() string {
	var b strings.Builder
	for _, l := range n.Lines() {
		b.WriteString("\n  rule broken: " + l)
	}
	return b.String()
}

// Findings returns the first finding of each named rule.
func (n Named) Findings() []Finding { return n.findings }

// Wrap returns err, whose message names the rules (String), with the rules
// as values, for Failure.Findings; err itself when there are none.
func (n Named) Wrap(err error) error {
	if err == nil || len(n.findings) == 0 {
		return err
	}
	return &RulesError{err: err, findings: n.findings, lines: n.Lines()}
}

// RulesError is a command's failure that names the rules it found broken:
// its message, with a "rule broken:" line for each, and the same rules as
// values, which the script runner makes Failure.Findings and Failure.Rules
// of, so that no one reads them back from the message.
type RulesError struct {
	err      error
	findings []Finding
	lines    []string
}

func (e *RulesError) Error() string { return e.err.Error() }
func (e *RulesError) Unwrap() error { return e.err }

// Findings returns the rules broken, as values.
func (e *RulesError) Findings() []Finding { return e.findings }

// Lines returns the rules broken as the message renders them.
func (e *RulesError) Lines() []string { return e.lines }

// NamingRules returns err with the findings fs as values: a Command's Run
// returns it when its failure names rules broken, as a failed reconcile
// does, so that the failure (Failure.Findings, Failure.Rules) and every
// judge of a run (CheckNoise, explore's table) read them as data. err's
// message says what it says; each finding is rendered as Finding.String
// in Failure.Rules.
func NamingRules(err error, fs ...Finding) error {
	return Name(fs, "").Wrap(err)
}
