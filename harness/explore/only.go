package explore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/hooks"
)

// An explore line's only=[ACTOR:]RESOURCE[/NAME[/SUB]] keeps the moments
// of the calls on that resource or object alone: whoever makes them, or,
// with ACTOR:, ACTOR's alone. It is for a controller that runs on its own,
// whose calls on other things (a lease it renews every two seconds, events
// it records from a goroutine of their own) come at moments that need not
// recur from run to run, or are not worth a run each; and for another
// actor's calls on the same resource, such as kube-controller-manager's
// garbage collector reading an operator's custom resources (only=op:…
// keeps the operator's and leaves kcm's out). Several only= keep the calls
// any of them names.

// onlyForm says what an only= value may be.
const onlyForm = "want only=[ACTOR:]RESOURCE, only=[ACTOR:]RESOURCE/NAME or only=[ACTOR:]RESOURCE/NAME/SUB, such as only=configmaps, only=deployments/web or only=controller:deployments/web"

// splitOnly returns an only= value's actor ("" for any actor) and what
// it names after it.
func splitOnly(v string) (actor, object string) {
	if a, o, ok := strings.Cut(v, ":"); ok {
		return a, o
	}
	return "", v
}

// parseOnly checks the form of an only= value, at pos.
func parseOnly(v, pos string) error {
	actor, object := splitOnly(v)
	parts := strings.Split(object, "/")
	switch {
	case strings.Contains(v, ":") && !language.ValidActor(actor):
		return fmt.Errorf("%s: bad only=%s: %q is no actor name (lower-case letters, digits and hyphens); %s", pos, v, actor, onlyForm)
	case object == "" || len(parts) > 3 || strings.ContainsAny(object, "*:") || strings.Contains(object, "//") || strings.HasSuffix(object, "/"):
		return fmt.Errorf("%s: bad only=%s: %s", pos, v, onlyForm)
	}
	return nil
}

// matchOnly turns the only= values into matchers of the resources the
// scenario knows (its API server's, and the services its controllers
// call), or says which one names no resource.
func matchOnly(sc *language.Scenario, only []string) ([]hooks.Matcher, error) {
	return onlyMatchers(sc.ParseTrigger, only)
}

// onlyMatchers turns the only= values into matchers, each read as the
// trigger "before ACTOR * RESOURCE..." that parse reads (the scenario's
// ParseTrigger, which knows its resources), ACTOR * for any actor.
func onlyMatchers(parse func([]string) (language.Trigger, error), only []string) ([]hooks.Matcher, error) {
	var out []hooks.Matcher
	for _, v := range only {
		actor, object := splitOnly(v)
		if actor == "" {
			actor = "*"
		}
		t, err := parse([]string{"before", actor, "*", object})
		if err != nil {
			return nil, fmt.Errorf("only=%s: %s", v, strings.TrimPrefix(err.Error(), "usage: "))
		}
		out = append(out, t.Match)
	}
	return out, nil
}

// keepOnly returns whether a call's moments are explored: any call when ms
// is empty, else a call on a resource or an object some matcher names, as
// a trigger names it, by the matcher's actor if it names one:
// only=rabbitmqclusters/r keeps the calls on the object, not those on its
// status, which only=rabbitmqclusters/r/status keeps. A controller that
// runs on its own writes its status as often as its reconciles happen to
// run, so that a moment at its Nth status write may not come in every run.
func keepOnly(ms []hooks.Matcher) func(hooks.Call) bool {
	if len(ms) == 0 {
		return func(hooks.Call) bool { return true }
	}
	return func(c hooks.Call) bool {
		for _, m := range ms {
			if (m.Actor == "" || m.Actor == c.Actor) && m.Resource == c.Resource && (m.Name == "" || m.Name == c.Name) && m.Subresource == c.Subresource {
				return true
			}
		}
		return false
	}
}

// onlyMisses returns an error naming each of e's only= values, ms, that
// keeps no call of the workload, the calls after seq from in tr (a watch
// is no moment, so no such call): a misspelt only= would otherwise leave
// the exploration to the moments of the others, and pass on them. An
// only= whose ACTOR made no call of the workload says so, with the actors
// that did.
func onlyMisses(tr record.Trace, from int, e *exploration, ms []hooks.Matcher) error {
	var calls []*record.Exchange
	for _, x := range tr.Own() {
		if x.Seq > from && x.Verb != "watch" {
			calls = append(calls, x)
		}
	}
	var missed []int
	for i, m := range ms {
		if !slices.ContainsFunc(calls, func(x *record.Exchange) bool { return keepOnly([]hooks.Matcher{m})(x.Call) }) {
			missed = append(missed, i)
		}
	}
	if len(missed) == 0 {
		return nil
	}
	var names []string
	for _, i := range missed {
		names = append(names, "only="+e.only[i])
	}
	if len(calls) == 0 {
		return fmt.Errorf("the workload %q made no call, so %s %s none: there is no moment to explore", e.workload, strings.Join(names, " and "), matches(len(names)))
	}
	var why []string
	for _, i := range missed {
		why = append(why, missWhy(e.only[i], e.workload, calls))
	}
	return fmt.Errorf("%s: each only= must keep the moments of some call", strings.Join(why, "; "))
}

// missWhy says why the only= value v keeps none of the workload's calls:
// what the workload (or v's actor) calls on, or, when v's actor made none
// of them, which actors did; and the near miss it may have meant.
func missWhy(v, workload string, calls []*record.Exchange) string {
	actor, _ := splitOnly(v)
	var objects, actors, named []string
	add := func(list *[]string, s string) {
		if !slices.Contains(*list, s) {
			*list = append(*list, s)
		}
	}
	for _, x := range calls {
		add(&actors, x.Actor)
		if actor != "" && x.Actor != actor {
			continue
		}
		add(&objects, x.Object())
		prefix := ""
		if actor != "" {
			prefix = actor + ":"
		}
		add(&named, prefix+x.Object())
		add(&named, prefix+x.Resource)
	}
	if actor != "" && len(objects) == 0 {
		near := language.Suggest(actor, actors)
		return fmt.Sprintf("only=%s matches no call of the workload %q: %s made none%s, and its calls are by %s", v, workload, actor, near, strings.Join(actors, ", "))
	}
	near, who := language.Suggest(v, named), "which calls"
	if actor != "" {
		who = "in which " + actor + " calls"
	}
	return fmt.Sprintf("only=%s matches no call of the workload %q%s, %s on %s", v, workload, near, who, strings.Join(objects, ", "))
}

// matches is the verb for n only= values.
func matches(n int) string {
	if n == 1 {
		return "matches"
	}
	return "match"
}
