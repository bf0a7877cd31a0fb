package language

import (
	"io"
	"strconv"
	"strings"

	"github.com/racekit/racekit/hooks"
)

var onCommands = []*Command{
	{
		Name: "on", Args: "POINT ACTOR VERB RESOURCE[/NAME[/SUB]] [Nth|every]: [!] COMMAND ARGS...", Group: "race",
		MinArgs: 5, MaxArgs: -1,
		Summary: "arm a hook: when ACTOR's Nth matching call reaches POINT, run COMMAND synchronously before the call goes on (ACTOR and VERB may be *; Nth is 1st, 2nd, 3rd, ... and defaults to 1st)",
		Run:     runOn,
	},
}

// Trigger is the parsed left side of an on command: a hook point, a
// matcher over calls, and an occurrence.
type Trigger struct {
	Point hooks.Point
	Match hooks.Matcher
	Occ   int
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
		return UsageError("missing \":\" between the trigger and the action")
	}
	left := append([]string(nil), inv.Args[:colon+1]...)
	left[colon] = strings.TrimSuffix(left[colon], ":")
	if left[colon] == "" {
		left = left[:colon]
	}
	trig, err := sc.ParseTrigger(left)
	if err != nil {
		return err
	}
	action := inv.Args[colon+1:]
	neg := len(action) > 0 && action[0] == "!"
	if neg {
		action = action[1:]
	}
	if len(action) == 0 {
		return UsageError("missing action after \":\"")
	}
	cmd, ok := sc.run.cmds[action[0]]
	if !ok {
		return UsageError("unknown action command %q%s", action[0], suggest(action[0], sc.hookableNames()))
	}
	if !cmd.Hookable {
		return UsageError("%s cannot run as a hook action; these can: %s", cmd.Name, strings.Join(sc.hookableNames(), ", "))
	}
	args := action[1:]
	if n := len(args); n < cmd.MinArgs || (cmd.MaxArgs >= 0 && n > cmd.MaxArgs) {
		return UsageError("action has the wrong number of arguments (%d); %s", n, cmd.Usage())
	}
	if neg && cmd.Negation == NoNegation {
		return UsageError("action %s does not take \"!\"", cmd.Name)
	}
	if cmd.Name == "do" {
		if err := CheckDo(sc.run.cmds, args, true); err != nil {
			return err
		}
	}
	label := strings.Join(action, " ")
	if neg {
		label = "! " + label
	}
	pos := inv.Pos
	sc.Arm(hooks.Hook{
		Point: trig.Point, Match: trig.Match, Occurrence: trig.Occ, Label: label,
		Action: func(e hooks.Event) error {
			if err := cmd.Call(sc, Invocation{Neg: neg, Args: args, Stdout: io.Discard, Pos: pos, InHook: true, Ctx: e.Context}); err != nil {
				return err
			}
			// A cached controller reads next what its cache holds: let
			// it hold the action's writes before the call goes on.
			return sc.AfterAction()
		},
	}, pos)
	return nil
}

func (sc *Scenario) hookableNames() []string {
	var out []string
	for _, c := range Sorted(sc.run.cmds) {
		if c.Hookable {
			out = append(out, c.Name)
		}
	}
	return out
}

// ParseTrigger reads POINT ACTOR VERB RESOURCE[/NAME[/SUB]] [Nth|every]. Its
// matcher keeps to the scenario's namespace and cluster-scoped calls.
func (sc *Scenario) ParseTrigger(args []string) (Trigger, error) {
	var t Trigger
	if len(args) < 4 || len(args) > 5 {
		return t, UsageError("the trigger is POINT ACTOR VERB RESOURCE[/NAME] [Nth|every], got %q", strings.Join(args, " "))
	}
	var names []string
	for _, p := range hooks.Points() {
		names = append(names, p.Name)
	}
	p, ok := hooks.LookupPoint(args[0])
	if !ok {
		return t, UsageError("unknown hook point %q%s; hook points are %s", args[0], suggest(args[0], names), strings.Join(names, ", "))
	}
	t.Point = p
	// A scenario's hooks, awaits and counts are about its own namespace:
	// a controller that runs on its own may touch another scenario's
	// object of the same name.
	t.Match.Namespace = sc.Namespace
	if args[1] != "*" {
		if !actorName.MatchString(args[1]) {
			return t, UsageError("bad actor name %q", args[1])
		}
		t.Match.Actor = args[1]
	}
	if args[2] != "*" {
		if !contains(hooks.Verbs, args[2]) {
			return t, UsageError("unknown verb %q%s; verbs are %s", args[2], verbHint(args[2], hooks.Verbs), strings.Join(hooks.Verbs, ", "))
		}
		t.Match.Verb = args[2]
	}
	parts := strings.SplitN(args[3], "/", 3)
	switch {
	case parts[0] == "*":
	case sc.Service(parts[0]):
		// A service outside the API server that a controller calls:
		// Controller.SideEffects.
		t.Match.Resource = parts[0]
	default:
		gvr, _, err := sc.cp.Resource(parts[0])
		if err != nil {
			return t, UsageError("%v", err)
		}
		t.Match.Resource = gvr.Resource
	}
	if len(parts) > 1 && parts[1] != "*" {
		t.Match.Name = parts[1]
	}
	if len(parts) > 2 {
		t.Match.Subresource = parts[2]
	}
	t.Occ = 1
	if len(args) == 5 {
		occ, err := parseOccurrence(args[4])
		if err != nil {
			return t, err
		}
		t.Occ = occ
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
		return 0, UsageError("bad occurrence %q: want 1st, 2nd, 3rd, 4th, ... or every", s)
	}
	return n, nil
}

// AsActor reads the optional "as ACTOR" that ends a command's arguments,
// and returns ControllerActor without it: for commands that, like
// reconcile, take it.
func AsActor(args []string) (string, error) { return asActor(args) }

func asActor(args []string) (string, error) {
	switch {
	case len(args) == 0:
		return ControllerActor, nil
	case len(args) == 2 && args[0] == "as" && actorName.MatchString(args[1]):
		return args[1], nil
	case len(args) == 2 && args[0] == "as":
		return "", UsageError("bad actor name %q: want a lower-case name such as controller-b", args[1])
	}
	return "", UsageError("unexpected %q: the optional end is as ACTOR", strings.Join(args, " "))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
