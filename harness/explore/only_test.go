package explore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/hooks"
	"github.com/racekit/racekit/internal/hint"
)

// The pools the generator draws calls and only= values from: actors that
// share resources (kcm reads what the controller writes), resources,
// names, subresources and verbs (a watch is no moment).
var (
	genActors    = []string{"controller", "kcm", "bob", "setup"}
	genResources = []string{"configmaps", "deployments", "webapps"}
	genNames     = []string{"a", "b", "web"}
	genSubs      = []string{"", "", "status"}
	genVerbs     = []string{"get", "update", "create", "list", "watch"}
)

// parseTrigger reads a trigger as the scenario's ParseTrigger does, for
// every resource it is given: the actor (* for any), the verb, and the
// resource, name and subresource split at '/'.
func parseTrigger(args []string) (language.Trigger, error) {
	var t language.Trigger
	if args[1] != "*" {
		t.Match.Actor = args[1]
	}
	parts := strings.SplitN(args[3], "/", 3)
	t.Match.Resource = parts[0]
	if len(parts) > 1 {
		t.Match.Name = parts[1]
	}
	if len(parts) > 2 {
		t.Match.Subresource = parts[2]
	}
	return t, nil
}

// onlySpec is an only= value as the generator made it, read back from its
// parts: what it claims to keep.
type onlySpec struct{ actor, resource, name, sub string }

func (o onlySpec) String() string {
	s := o.resource
	if o.name != "" {
		s += "/" + o.name
		if o.sub != "" {
			s += "/" + o.sub
		}
	}
	if o.actor != "" {
		s = o.actor + ":" + s
	}
	return s
}

// keeps is the oracle: what the value, by its definition in
// docs/explore.md, keeps: the calls on the resource, object or
// subresource it names (an object's, not its subresource's, when it
// names no subresource), by its actor when it names one.
func (o onlySpec) keeps(c hooks.Call) bool {
	return (o.actor == "" || o.actor == c.Actor) && o.resource == c.Resource &&
		(o.name == "" || o.name == c.Name) && o.sub == c.Subresource
}

// misspell returns s with one letter dropped: a near miss, one edit away.
func misspell(r *rand.Rand, s string) string {
	i := r.IntN(len(s))
	return s[:i] + s[i+1:]
}

// genOnly makes an only= value for the calls: one drawn from a call (any
// call of the trace: before the workload, a watch, or a call of the
// workload), at a random granularity, with its actor, with none, with
// another actor, or with its actor misspelt; or one drawn from the pools,
// which may match nothing.
func genOnly(r *rand.Rand, calls []hooks.Call) onlySpec {
	var o onlySpec
	if len(calls) == 0 || r.IntN(4) == 0 {
		o = onlySpec{resource: genResources[r.IntN(len(genResources))]}
		if r.IntN(2) == 0 {
			o.name = genNames[r.IntN(len(genNames))]
		}
	} else {
		c := calls[r.IntN(len(calls))]
		o = onlySpec{resource: c.Resource}
		switch r.IntN(3) {
		case 1:
			o.name = c.Name
		case 2:
			o.name, o.sub = c.Name, c.Subresource
		}
		switch r.IntN(5) {
		case 1, 2:
			o.actor = c.Actor
		case 3:
			o.actor = genActors[r.IntN(len(genActors))]
		case 4:
			o.actor = misspell(r, c.Actor)
		}
	}
	if o.actor != "" && !language.ValidActor(o.actor) {
		o.actor = "x" + o.actor // a dropped first letter leaves a valid name
	}
	return o
}

// TestOnlyGenerated checks only=, with and without an actor, against a
// generator of calls and of only= values (seeded, so that a failure is
// repeated): each value parses; the calls the explore line keeps are
// exactly those some value keeps by its definition; a value with ACTOR:
// keeps none of another actor's calls, and keeps what it would keep
// without ACTOR: of ACTOR's; and explore refuses the values that keep no
// call of the workload (a watch, or a call before it, is none), each
// named, and only those, saying, for one whose actor made none of the
// workload's calls, that it made none, which actors did, and the near
// miss it may have meant.
func TestOnlyGenerated(t *testing.T) {
	const cases = 2000
	r := rand.New(rand.NewPCG(31, 2026))
	refused, actorless, accepted := 0, 0, 0
	for n := range cases {
		var tr record.Trace
		var calls []hooks.Call
		for i := range r.IntN(10) {
			c := hooks.Call{Actor: genActors[r.IntN(len(genActors))], Verb: genVerbs[r.IntN(len(genVerbs))],
				Resource: genResources[r.IntN(len(genResources))], Name: genNames[r.IntN(len(genNames))], Namespace: "rk-x-abcde"}
			if c.Verb != "list" && c.Verb != "watch" {
				c.Subresource = genSubs[r.IntN(len(genSubs))]
			} else {
				c.Name = ""
			}
			x := exchange(i+1, c.Actor, c.Verb, c.Resource, c.Name, "", 200, "OK", "1")
			x.Exchange.Call = c
			tr = append(tr, x)
			calls = append(calls, c)
		}
		from := r.IntN(2)
		var specs []onlySpec
		var values []string
		for range 1 + r.IntN(2) {
			o := genOnly(r, calls)
			specs, values = append(specs, o), append(values, o.String())
		}
		name := fmt.Sprintf("case %d: only=%s after #%d of %v", n, strings.Join(values, " only="), from, calls)
		for _, v := range values {
			assert.NilError(t, parseOnly(v, "x.txtar:1"), name)
		}
		ms, err := onlyMatchers(parseTrigger, values)
		assert.NilError(t, err, name)
		keep := keepOnly(ms)
		for _, c := range calls {
			want := slices.ContainsFunc(specs, func(o onlySpec) bool { return o.keeps(c) })
			assert.Equal(t, keep(c), want, "%s: the call %v", name, c)
			for i, o := range specs {
				one := keepOnly(ms[i : i+1])(c)
				if o.actor != "" && o.actor != c.Actor {
					assert.Assert(t, !one, "%s: only=%s keeps %s's call %v", name, o, c.Actor, c)
				}
				if o.actor == c.Actor {
					anyone := o
					anyone.actor = ""
					assert.Equal(t, one, keepOnly(mustMatch(t, anyone.String()))(c), "%s: only=%s and only=%s differ on %s's call %v", name, o, anyone, c.Actor, c)
				}
			}
		}

		// The refusal: the values that keep no call of the workload.
		var workload []hooks.Call
		var actors []string
		for i, c := range calls {
			if i+1 > from && c.Verb != "watch" {
				workload = append(workload, c)
				if !slices.Contains(actors, c.Actor) {
					actors = append(actors, c.Actor)
				}
			}
		}
		var missing []onlySpec
		for _, o := range specs {
			if !slices.ContainsFunc(workload, o.keeps) {
				missing = append(missing, o)
			}
		}
		e := &exploration{workload: "do it", only: values}
		err = onlyMisses(tr, from, e, ms)
		if len(missing) == 0 {
			assert.NilError(t, err, name)
			accepted++
			continue
		}
		refused++
		assert.Assert(t, err != nil, "%s: only=%v keeps no call of the workload, and is not refused", name, missing)
		msg := err.Error()
		for _, o := range specs {
			said := strings.Contains(msg, "only="+o.String()+" ")
			assert.Equal(t, said, slices.Contains(missing, o), "%s: only=%s is named in the refusal: %s", name, o, msg)
		}
		if len(workload) == 0 {
			assert.Assert(t, strings.Contains(msg, "made no call"), "%s: %s", name, msg)
			continue
		}
		for _, o := range missing {
			if o.actor == "" || slices.Contains(actors, o.actor) {
				continue
			}
			actorless++
			want := fmt.Sprintf("only=%s matches no call of the workload %q: %s made none%s, and its calls are by %s",
				o, e.workload, o.actor, hint.DidYouMean(o.actor, actors), strings.Join(actors, ", "))
			assert.Assert(t, strings.Contains(msg, want), "%s: want %q in %s", name, want, msg)
		}
	}
	// The generator must reach each branch, or the test checks less than
	// it says.
	assert.Assert(t, accepted > cases/5 && refused > cases/5 && actorless > cases/20, "accepted %d, refused %d (for an actor that made no call %d), of %d", accepted, refused, actorless, cases)
	t.Logf("%d cases: %d accepted, %d refused (%d for an actor that made none of the workload's calls)", cases, accepted, refused, actorless)
}

// mustMatch returns the matchers of one only= value.
func mustMatch(t *testing.T, v string) []hooks.Matcher {
	t.Helper()
	ms, err := onlyMatchers(parseTrigger, []string{v})
	assert.NilError(t, err)
	return ms
}

// TestOnlyForms checks parseOnly against every combination of an actor
// part and an object part, well-formed and malformed: it accepts one
// exactly when the actor part is absent or an actor's name, and the
// object part is RESOURCE, RESOURCE/NAME or RESOURCE/NAME/SUB.
func TestOnlyForms(t *testing.T) {
	actors := map[string]bool{"": true, "kcm:": true, "controller:": true, "a-1:": true,
		":": false, "KCM:": false, "k m:": false, "1kcm:": false, "kcm:x:": false}
	objects := map[string]bool{"configmaps": true, "configmaps/c": true, "deployments/web/status": true,
		"": false, "configmaps/": false, "a/b/c/d": false, "c//d": false, "*": false, "configmaps/*": false}
	for a, aok := range actors {
		for o, ook := range objects {
			v := a + o
			err := parseOnly(v, "x.txtar:1")
			if aok && ook {
				assert.NilError(t, err, "only=%s", v)
				continue
			}
			assert.ErrorContains(t, err, "x.txtar:1: bad only="+v+":", "only=%s", v)
		}
	}
}
