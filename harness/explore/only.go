package explore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/hooks"
)

// An explore line's only=RESOURCE[/NAME[/SUB]] keeps the moments of the
// calls on that resource or object alone, whoever makes them: for a
// controller that runs on its own, whose calls on other things (a lease it
// renews every two seconds, events it records from a goroutine of their
// own) come at moments that need not recur from run to run, or are not
// worth a run each. Several only= keep the calls any of them names.

// parseOnly checks the form of an only= value, at pos.
func parseOnly(v, pos string) error {
	parts := strings.Split(v, "/")
	if v == "" || len(parts) > 3 || strings.Contains(v, "*") || strings.Contains(v, "//") || strings.HasSuffix(v, "/") {
		return fmt.Errorf("%s: bad only=%s: want only=RESOURCE, only=RESOURCE/NAME or only=RESOURCE/NAME/SUB, such as only=configmaps or only=deployments/web", pos, v)
	}
	return nil
}

// matchOnly turns the only= values into matchers of the resources the
// scenario knows (its API server's, and the services its controllers
// call), or says which one names no resource.
func matchOnly(sc *language.Scenario, only []string) ([]hooks.Matcher, error) {
	var out []hooks.Matcher
	for _, v := range only {
		t, err := sc.ParseTrigger([]string{"before", "*", "*", v})
		if err != nil {
			return nil, fmt.Errorf("only=%s: %s", v, strings.TrimPrefix(err.Error(), "usage: "))
		}
		out = append(out, t.Match)
	}
	return out, nil
}

// keepOnly returns whether a call's moments are explored: any call when ms
// is empty, else a call on a resource or an object some matcher names, as
// a trigger names it: only=rabbitmqclusters/r keeps the calls on the
// object, not those on its status, which only=rabbitmqclusters/r/status
// keeps. A controller that runs on its own writes its status as often as
// its reconciles happen to run, so that a moment at its Nth status write
// may not come in every run.
func keepOnly(ms []hooks.Matcher) func(hooks.Call) bool {
	if len(ms) == 0 {
		return func(hooks.Call) bool { return true }
	}
	return func(c hooks.Call) bool {
		for _, m := range ms {
			if m.Resource == c.Resource && (m.Name == "" || m.Name == c.Name) && m.Subresource == c.Subresource {
				return true
			}
		}
		return false
	}
}

// onlyMisses returns an error naming each of e's only= values, ms, that
// keeps no call of the workload, the calls after seq from in tr (a watch
// is no moment, so no such call): a misspelt only= would otherwise leave
// the exploration to the moments of the others, and pass on them.
func onlyMisses(tr record.Trace, from int, e *exploration, ms []hooks.Matcher) error {
	var objects, named, missed []string
	hit := make([]bool, len(ms))
	for _, x := range tr.Own() {
		if x.Seq <= from || x.Verb == "watch" {
			continue
		}
		if !slices.Contains(objects, x.Object()) {
			objects = append(objects, x.Object())
		}
		for _, n := range []string{x.Object(), x.Resource} {
			if !slices.Contains(named, n) {
				named = append(named, n)
			}
		}
		for i, m := range ms {
			hit[i] = hit[i] || keepOnly([]hooks.Matcher{m})(x.Call)
		}
	}
	for i, ok := range hit {
		if !ok {
			missed = append(missed, "only="+e.only[i])
		}
	}
	switch {
	case len(missed) == 0:
		return nil
	case len(objects) == 0:
		return fmt.Errorf("the workload %q made no call, so %s %s none: there is no moment to explore", e.workload, strings.Join(missed, " and "), matches(len(missed)))
	}
	hint := ""
	if len(missed) == 1 {
		hint = language.Suggest(strings.TrimPrefix(missed[0], "only="), named)
	}
	return fmt.Errorf("%s %s no call of the workload %q%s, which calls on %s: each only= must keep the moments of some call", strings.Join(missed, " and "), matches(len(missed)), e.workload, hint, strings.Join(objects, ", "))
}

// matches is the verb for n only= values.
func matches(n int) string {
	if n == 1 {
		return "matches"
	}
	return "match"
}
