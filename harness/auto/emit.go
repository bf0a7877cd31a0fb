package auto

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/language"
)

// regression returns the regression scenario of a confirmed finding: the
// setup, the plan's fault as concrete lines (its hooks, its marks, its
// restart after the workload), the workload, and as assertions only what
// differed, each claiming the references' value: a field's value
// (field), an object's presence (get) or absence (! get), a count of
// creates or deletes (wire). A failure the references did not have needs
// no assertion: the line that failed fails again. So the scenario fails
// while the bug is there and passes once the controller does what the
// references did. note, when not empty, is said in its header (what the
// shrinker left out).
func regression(a *explore.Auto, rep *explore.Report, p explore.Plan, il explore.Interleaving, note string) []byte {
	heads, tail := faultLines(p)
	claims, notes := assertions(il.Differences)
	ar := txtar.Parse(a.WithWorkload(p.Workload).Script(heads, append(append(tail, claims...), notes...)))
	var h strings.Builder
	fmt.Fprintf(&h, "# racekit explore auto wrote this regression scenario from %s,\n", filepath.Base(rep.File))
	fmt.Fprintf(&h, "# exploring %s. The %s plan %s\n", rep.Workload, p.Class, p.Name)
	fmt.Fprintf(&h, "# (%s) ended unlike the reference runs, twice:\n#\n", p.Fault)
	for _, d := range il.Differences {
		fmt.Fprintf(&h, "#   %s\n", d)
	}
	h.WriteString("#\n# The assertions at the end claim what the references had: it fails\n")
	h.WriteString("# while the bug is there and passes once it is fixed.\n")
	if note != "" {
		h.WriteString("#\n")
		for _, l := range strings.Split(note, "\n") {
			h.WriteString("# " + l + "\n")
		}
	}
	h.WriteString("\n")
	ar.Comment = append([]byte(h.String()), ar.Comment...)
	return txtar.Format(ar)
}

// faultLines returns a plan's lines before the workload (its hooks, then
// its heads) and after it (its tail, but the read of the end state, which
// only the oracle needs).
func faultLines(p explore.Plan) (heads, tail []string) {
	for _, h := range p.Hooks {
		heads = append(heads, h.Line())
	}
	heads = append(heads, p.Heads...)
	for _, t := range p.Tail {
		if !strings.HasPrefix(t, "auto-observe") {
			tail = append(tail, t)
		}
	}
	return heads, tail
}

// assertions returns the lines that claim the references' side of ds, and
// as comments the differences no command can claim.
func assertions(ds []explore.Difference) (claims, notes []string) {
	conds, asserted := conditions(ds)
	for i, d := range ds {
		if line, ok := conds[i]; ok {
			claims = append(claims, line)
			continue
		}
		if asserted[i] {
			continue
		}
		line, ok := assertion(d)
		if !ok {
			notes = append(notes, "# not asserted (no command says it): "+d.String())
			continue
		}
		claims = append(claims, line)
	}
	return claims, notes
}

var conditionField = regexp.MustCompile(`^status\.conditions\[type=([^\]]+)\]\.(status|reason)$`)

// conditions returns the condition lines that claim the references'
// status (and reason) of each condition whose status differed in ds
// (status.conditions[type=T].status), by the index of the first of its
// differences, and which other differences of ds those lines assert (its
// reason). A condition whose reason alone differed has no line: the
// command needs the status, which the differences do not hold.
func conditions(ds []explore.Difference) (map[int]string, map[int]bool) {
	type cond struct {
		first, statusAt, reasonAt int
		status, reason            string
	}
	byKey := map[string]*cond{}
	var keys []string
	for i, d := range ds {
		m := conditionField.FindStringSubmatch(d.Field)
		if d.Kind != "field" || m == nil {
			continue
		}
		var v string
		if err := json.Unmarshal([]byte(d.Reference), &v); err != nil {
			continue // <absent>: the references had no such condition
		}
		k := d.Object + " " + m[1]
		c := byKey[k]
		if c == nil {
			c = &cond{first: i, statusAt: -1, reasonAt: -1}
			byKey[k] = c
			keys = append(keys, k)
		}
		if m[2] == "status" {
			c.status, c.statusAt = v, i
		} else {
			c.reason, c.reasonAt = v, i
		}
	}
	lines, asserted := map[int]string{}, map[int]bool{}
	for _, k := range keys {
		c := byKey[k]
		if c.statusAt < 0 {
			continue
		}
		line := "condition " + k + " " + quote(c.status)
		asserted[c.statusAt] = true
		if c.reasonAt >= 0 {
			line += " " + quote(c.reason)
			asserted[c.reasonAt] = true
		}
		lines[c.first] = line
	}
	return lines, asserted
}

var historyField = regexp.MustCompile(`^(create|delete) by (\S+) \((\d+)\)$`)

// assertion returns the line that claims d's reference value, and false
// when no command says it: a field inside a list or under a key with a
// dot or a slash (field's PATH is dotted), a time, a failure.
func assertion(d explore.Difference) (string, bool) {
	switch d.Kind {
	case "object":
		if d.Reference == "present" {
			return "get setup " + d.Object + " auto-found", true
		}
		return "! get setup " + d.Object + " auto-gone", true
	case "history":
		m := historyField.FindStringSubmatch(d.Field)
		if m == nil {
			return "", false
		}
		return fmt.Sprintf("wire %s %s %s %s %s", m[2], m[1], d.Object, m[3], d.Reference), true
	case "field":
		if key, ok := strings.CutPrefix(d.Field, "metadata.annotations."); ok {
			return annotationClaim(d, key)
		}
		if strings.ContainsAny(d.Field, "[/") || d.Reference == "<time>" {
			return "", false
		}
		want := d.Reference
		if want != "<absent>" {
			var v any
			if err := json.Unmarshal([]byte(want), &v); err != nil {
				return "", false
			}
			want = language.Render(v)
		}
		return fmt.Sprintf("field %s %s %s", d.Object, d.Field, quote(want)), true
	}
	return "", false
}

// annotationClaim returns the annotation line that claims the
// references' side of d, a difference in the annotation key: that it is
// there (whatever its value, when the references' was a time, which is
// masked), that it is not, or its value.
func annotationClaim(d explore.Difference, key string) (string, bool) {
	switch {
	case d.Reference == "<absent>":
		return "! annotation " + d.Object + " " + quote(key), true
	case d.Reference == "<time>":
		return "annotation " + d.Object + " " + quote(key), true
	}
	var v string
	if err := json.Unmarshal([]byte(d.Reference), &v); err != nil {
		return "", false
	}
	return "annotation " + d.Object + " " + quote(key+"="+v), true
}

// quote quotes s for a script line when it needs it: testscript's single
// quotes, with a quote inside doubled.
func quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t'\"#") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
