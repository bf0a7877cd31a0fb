package harness

import (
	"fmt"
	"strings"
)

// namedRules are the rules a failure names: each rule once per object,
// in the order first found, with how often it was broken.
type namedRules struct {
	findings []Finding
	counts   []int
}

// nameRules names the rules of fs about object ("" for all).
func nameRules(fs []Finding, object string) namedRules {
	type key struct{ object, rule string }
	at := map[key]int{}
	var n namedRules
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

// lines renders each named rule as a failure message says it after
// "rule broken: ", with how often it was broken.
func (n namedRules) lines() []string {
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
func (n namedRules) String() string {
	var b strings.Builder
	for _, l := range n.lines() {
		b.WriteString("\n  rule broken: " + l)
	}
	return b.String()
}

// wrap returns err, whose message names the rules (String), with the rules
// as values, for Failure.Findings; err itself when there are none.
func (n namedRules) wrap(err error) error {
	if err == nil || len(n.findings) == 0 {
		return err
	}
	return &rulesError{err: err, findings: n.findings, lines: n.lines()}
}

// rulesError is a command's failure that names the rules it found broken:
// its message, with a "rule broken:" line for each, and the same rules as
// values, which adapt makes Failure.Findings and Failure.Rules of, so that
// no one reads them back from the message.
type rulesError struct {
	err      error
	findings []Finding
	lines    []string
}

func (e *rulesError) Error() string { return e.err.Error() }
func (e *rulesError) Unwrap() error { return e.err }

// NamingRules returns err with the findings fs as values: a Command's Run
// returns it when its failure names rules broken, as a failed reconcile
// does, so that the failure (Failure.Findings, Failure.Rules) and every
// judge of a run (CheckNoise, explore's table) read them as data. err's
// message says what it says; each finding is rendered as Finding.String
// in Failure.Rules.
func NamingRules(err error, fs ...Finding) error {
	return nameRules(fs, "").wrap(err)
}
