package harness

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/racekit/racekit/controller/api/v1alpha1"
	"github.com/racekit/racekit/controller/registry"
	"github.com/racekit/racekit/hooks"
)

func init() {
	register(&Command{
		Name: "on", Args: "POINT ACTOR VERB RESOURCE[/NAME[/SUB]] [Nth|every]: [!] COMMAND ARGS...", Group: "race",
		MinArgs: 5, MaxArgs: -1,
		Summary: "arm a hook: when ACTOR's Nth matching call reaches POINT, run COMMAND synchronously before the call goes on (ACTOR and VERB may be *; Nth is 1st, 2nd, 3rd, ... and defaults to 1st)",
		Run:     runOn,
	})
	register(&Command{
		Name: "reconcile", Args: "webapps/NAME [as ACTOR]", Group: "race", MinArgs: 1, MaxArgs: 3,
		Summary: "run one reconcile of the reference controller for the WebApp, as the controller actor or as ACTOR: another instance, with counters of its own, that shares the registry; " +
			"\"!\" expects it to return an error, which goes to stdout; a reconcile that makes more than " + strconv.Itoa(runawayCalls) + " calls of one kind is stopped as an unbounded retry",
		Negation: NegSelf, Hookable: true, Run: runReconcile,
	})
}

// trigger is the parsed left side of an on command.
type trigger struct {
	point hooks.Point
	match hooks.Matcher
	occ   int
}

func runOn(sc *Scenario, inv Invocation) error {
	colon := -1
	for i, a := range inv.Args {
		if strings.HasSuffix(a, ":") {
			colon = i
			break
		}
	}
	if colon < 0 {
		return usageErr("missing \":\" between the trigger and the action")
	}
	left := append([]string(nil), inv.Args[:colon+1]...)
	left[colon] = strings.TrimSuffix(left[colon], ":")
	if left[colon] == "" {
		left = left[:colon]
	}
	trig, err := sc.parseTrigger(left)
	if err != nil {
		return err
	}
	action := inv.Args[colon+1:]
	neg := len(action) > 0 && action[0] == "!"
	if neg {
		action = action[1:]
	}
	if len(action) == 0 {
		return usageErr("missing action after \":\"")
	}
	cmd, ok := commands[action[0]]
	if !ok {
		return usageErr("unknown action command %q%s", action[0], suggest(action[0], hookableNames()))
	}
	if !cmd.Hookable {
		return usageErr("%s cannot run as a hook action; these can: %s", cmd.Name, strings.Join(hookableNames(), ", "))
	}
	args := action[1:]
	if n := len(args); n < cmd.MinArgs || (cmd.MaxArgs >= 0 && n > cmd.MaxArgs) {
		return usageErr("action has the wrong number of arguments (%d); %s", n, cmd.Usage())
	}
	if neg && cmd.Negation == NoNegation {
		return usageErr("action %s does not take \"!\"", cmd.Name)
	}
	label := strings.Join(action, " ")
	if neg {
		label = "! " + label
	}
	pos := inv.Pos
	sc.arm(hooks.Hook{
		Point: trig.point, Match: trig.match, Occurrence: trig.occ, Label: label,
		Action: func(hooks.Event) error {
			return cmd.call(sc, Invocation{Neg: neg, Args: args, Stdout: io.Discard, Pos: pos, InHook: true})
		},
	}, pos)
	return nil
}

func hookableNames() []string {
	var out []string
	for _, c := range Commands() {
		if c.Hookable {
			out = append(out, c.Name)
		}
	}
	return out
}

// parseTrigger reads POINT ACTOR VERB RESOURCE[/NAME[/SUB]] [Nth|every].
func (sc *Scenario) parseTrigger(args []string) (trigger, error) {
	var t trigger
	if len(args) < 4 || len(args) > 5 {
		return t, usageErr("the trigger is POINT ACTOR VERB RESOURCE[/NAME] [Nth|every], got %q", strings.Join(args, " "))
	}
	var names []string
	for _, p := range hooks.Points() {
		names = append(names, p.Name)
	}
	p, ok := hooks.LookupPoint(args[0])
	if !ok {
		return t, usageErr("unknown hook point %q%s; hook points are %s", args[0], suggest(args[0], names), strings.Join(names, ", "))
	}
	t.point = p
	if args[1] != "*" {
		if !actorName.MatchString(args[1]) {
			return t, usageErr("bad actor name %q", args[1])
		}
		t.match.Actor = args[1]
	}
	if args[2] != "*" {
		if !contains(hooks.Verbs, args[2]) {
			return t, usageErr("unknown verb %q%s; verbs are %s", args[2], suggest(args[2], hooks.Verbs), strings.Join(hooks.Verbs, ", "))
		}
		t.match.Verb = args[2]
	}
	parts := strings.SplitN(args[3], "/", 3)
	switch parts[0] {
	case "*":
	case registry.Resource:
		// The registry's calls: create (register), delete, get.
		t.match.Resource = registry.Resource
	default:
		gvr, _, err := sc.cp.resource(parts[0])
		if err != nil {
			return t, usageErr("%v", err)
		}
		t.match.Resource = gvr.Resource
	}
	if len(parts) > 1 && parts[1] != "*" {
		t.match.Name = parts[1]
	}
	if len(parts) > 2 {
		t.match.Subresource = parts[2]
	}
	t.occ = 1
	if len(args) == 5 {
		occ, err := parseOccurrence(args[4])
		if err != nil {
			return t, err
		}
		t.occ = occ
	}
	return t, nil
}

// parseOccurrence reads "1st", "2nd", "3rd", "4th", ... or "every". An
// ordinal, not "#1": testscript reads # as the start of a comment.
func parseOccurrence(s string) (int, error) {
	if s == "every" {
		return hooks.Every, nil
	}
	digits := strings.TrimRight(s, "stndrh")
	n, err := strconv.Atoi(digits)
	if err != nil || n < 1 || s != hooks.Ordinal(n) {
		return 0, usageErr("bad occurrence %q: want 1st, 2nd, 3rd, 4th, ... or every", s)
	}
	return n, nil
}

func runReconcile(sc *Scenario, inv Invocation) error {
	r, err := sc.object(inv.Args[0])
	if err != nil {
		return usageErr("%v", err)
	}
	if r.gvr.GroupResource() != v1alpha1.GroupVersion.WithResource(v1alpha1.Resource).GroupResource() {
		return usageErr("the reference controller reconciles webapps, not %s", r.gvr.Resource)
	}
	actor, err := asActor(inv.Args[1:])
	if err != nil {
		return err
	}
	rec, err := sc.Reconciler(actor)
	if err != nil {
		return err
	}
	span, err := sc.reconcile(rec, actor, r.name)
	if span.runaway != nil {
		return fmt.Errorf("%v\n%s", span.runaway, sc.Trace().Tail(12))
	}
	switch {
	case inv.Neg && err == nil:
		return fmt.Errorf("reconcile succeeded, but \"!\" expects an error%s\n%s", sc.brokenRules(span), sc.Trace().Tail(20))
	case inv.Neg:
		fmt.Fprintf(inv.Stdout, "reconcile error: %v\n", err)
		return nil
	case err != nil:
		return fmt.Errorf("%w%s\n%s", err, sc.brokenRules(span), sc.Trace().Tail(20))
	}
	return nil
}

// asActor reads the optional "as ACTOR" that ends a command, and returns
// ControllerActor without it.
func asActor(args []string) (string, error) {
	switch {
	case len(args) == 0:
		return ControllerActor, nil
	case len(args) == 2 && args[0] == "as" && actorName.MatchString(args[1]):
		return args[1], nil
	case len(args) == 2 && args[0] == "as":
		return "", usageErr("bad actor name %q: want a lower-case name such as controller-b", args[1])
	}
	return "", usageErr("unexpected %q: the optional end is as ACTOR", strings.Join(args, " "))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
