package language

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Declaring who an actor is, and two writes that stage a race in one line:
// bump and adopt. An actor that is not
// declared is a user of its own name in system:masters, whom RBAC never
// refuses; a declared actor is whoever the scenario says, and RBAC decides.
var actorCommands = []*Command{
	{
		Name: "actor", Args: "NAME [user=USER] [groups=GROUP,...] [impersonate=true]", Group: "setup", MinArgs: 2, MaxArgs: 4,
		Summary: "declare how an actor authenticates (its user, its groups, whether it may impersonate), so that RBAC decides what it may do",
		Detail: "declare, before NAME's first call, that NAME authenticates as USER (default NAME) in the GROUPs (default none) rather than in system:masters, so that RBAC decides what it may do; " +
			"rely on built-in grants, such as user=system:serviceaccount:kube-system:generic-garbage-collector (may get, update and delete anything, create nothing): a Role a scenario creates applies only once the API server's cache catches up; " +
			"impersonate=true lets a process spawned as NAME send Impersonate-User, -Group, -Uid and -Extra-* headers through the racing proxy, which refuses them with 403 otherwise, and RBAC decides whether USER may (groups=system:masters may)",
		Run: runActor,
	},
	{
		Name: "adopt", Args: "ACTOR RESOURCE/NAME OWNER-RESOURCE/NAME", Group: "write", MinArgs: 3, MaxArgs: 3,
		Summary:  "make the owner object the controlling owner of the object, as ACTOR (a merge patch of its ownerReferences)",
		Detail:   "make the owner object the controlling owner of the object, as ACTOR: a merge patch that replaces its ownerReferences with a controller reference to the owner, uid and all (the owner read as assertions read it, unrecorded)",
		Negation: NegAPIError, Hookable: true, Run: runAdopt,
	},
	{
		Name: "bump", Args: "ACTOR RESOURCE/NAME", Group: "write", MinArgs: 2, MaxArgs: 2,
		Summary:  "change the object as ACTOR so that its resourceVersion moves on, and nothing else: a merge patch of the annotation racekit.dev/bump to the scenario's next number",
		Negation: NegAPIError, Hookable: true, Run: runBump,
	},
}

var actorOptions = []string{"user", "groups", "impersonate"}

func runActor(sc *Scenario, inv Invocation) error {
	name := inv.Args[0]
	if !actorName.MatchString(name) {
		return UsageError("bad actor name %q: want a lower-case name such as bob or controller", name)
	}
	opts, err := ParseOptions(inv.Args[1:], actorOptions)
	if err != nil {
		return err
	}
	id := identity{user: name}
	if u, ok := opts["user"]; ok {
		if u == "" {
			return UsageError("user= needs a name")
		}
		id.user = u
	}
	if g, ok := opts["groups"]; ok && g != "" {
		id.groups = strings.Split(g, ",")
	}
	for _, g := range id.groups {
		if g == "" {
			return UsageError("bad groups %q: want names separated by commas", opts["groups"])
		}
	}
	if v, ok := opts["impersonate"]; ok {
		if v != "true" && v != "false" {
			return UsageError("bad impersonate=%s: want impersonate=true, or leave it out", v)
		}
		id.impersonate = v == "true"
	}
	return sc.declare(name, id)
}

// MayImpersonate reports whether name was declared with impersonate=true:
// the racing proxy then sends its impersonation headers on, for RBAC to
// decide, instead of refusing them.
func (sc *Scenario) MayImpersonate(name string) bool {
	sc.clients.mu.Lock()
	defer sc.clients.mu.Unlock()
	return sc.clients.identities[name].impersonate
}

func runBump(sc *Scenario, inv Invocation) error {
	b := bumpsKey.Of(sc)
	b.mu.Lock()
	b.n++
	n := b.n
	b.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{"racekit.dev/bump": fmt.Sprint(n)}}})
	return sc.Patch(inv.Args[0], inv.Args[1], types.MergePatchType, body)
}

func runAdopt(sc *Scenario, inv Invocation) error {
	o, err := sc.Object(inv.Args[2])
	if err != nil {
		return UsageError("%v", err)
	}
	owner, err := sc.ReadRef(o)
	if err != nil {
		return fmt.Errorf("read the owner %s: %w", o, err)
	}
	ref := metav1.NewControllerRef(owner, owner.GroupVersionKind())
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": []metav1.OwnerReference{*ref}}})
	return sc.Patch(inv.Args[0], inv.Args[1], types.MergePatchType, body)
}

// bumps counts a scenario's bump commands, for their values.
type bumps struct {
	mu sync.Mutex
	n  int
}

var bumpsKey = NewKey("bump", func(*Scenario) *bumps { return &bumps{} })
