package harness

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Declaring who an actor is, and two writes that stage a race in one line:
// bump and adopt. An actor that is not
// declared is a user of its own name in system:masters, whom RBAC never
// refuses; a declared actor is whoever the scenario says, and RBAC decides.
func init() {
	register(&Command{
		Name: "actor", Args: "NAME [user=USER] [groups=GROUP,...]", Group: "setup", MinArgs: 2, MaxArgs: 3,
		Summary: "declare, before NAME's first call, that NAME authenticates as USER (default NAME) in the GROUPs (default none) rather than in system:masters, so that RBAC decides what it may do; " +
			"rely on built-in grants, such as user=system:serviceaccount:kube-system:generic-garbage-collector (may get, update and delete anything, create nothing): a Role a scenario creates applies only once the API server's cache catches up",
		Run: runActor,
	})
	register(&Command{
		Name: "adopt", Args: "ACTOR RESOURCE/NAME OWNER-RESOURCE/NAME", Group: "write", MinArgs: 3, MaxArgs: 3,
		Summary:  "make the owner object the controlling owner of the object, as ACTOR: a merge patch that replaces its ownerReferences with a controller reference to the owner, uid and all (the owner read as assertions read it, unrecorded)",
		Negation: NegAPIError, Hookable: true, Run: runAdopt,
	})
	register(&Command{
		Name: "bump", Args: "ACTOR RESOURCE/NAME", Group: "write", MinArgs: 2, MaxArgs: 2,
		Summary:  "change the object as ACTOR so that its resourceVersion moves on, and nothing else: a merge patch of the annotation racekit.dev/bump to the scenario's next number",
		Negation: NegAPIError, Hookable: true, Run: runBump,
	})
}

// identity is who a declared actor authenticates as.
type identity struct {
	user   string
	groups []string
}

var actorOptions = []string{"user", "groups"}

func runActor(sc *Scenario, inv Invocation) error {
	name := inv.Args[0]
	if !actorName.MatchString(name) {
		return usageErr("bad actor name %q: want a lower-case name such as bob or controller", name)
	}
	opts, err := parseOptions(inv.Args[1:], actorOptions)
	if err != nil {
		return err
	}
	id := identity{user: name}
	if u, ok := opts["user"]; ok {
		if u == "" {
			return usageErr("user= needs a name")
		}
		id.user = u
	}
	if g, ok := opts["groups"]; ok && g != "" {
		id.groups = strings.Split(g, ",")
	}
	for _, g := range id.groups {
		if g == "" {
			return usageErr("bad groups %q: want names separated by commas", opts["groups"])
		}
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if _, used := sc.actors[name]; used {
		return fmt.Errorf("%s has already made calls as itself in system:masters; declare it before its first use", name)
	}
	if _, dup := sc.identities[name]; dup {
		return fmt.Errorf("%s is already declared", name)
	}
	sc.identities[name] = id
	return nil
}

// declaredUser returns a config that authenticates as id, with a client
// certificate of its own. Unlike User it does not cache by name: the same
// user name may come with other groups in another scenario.
func (cp *ControlPlane) declaredUser(id identity) (*rest.Config, error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	u, err := cp.env.AddUser(envtest.User{Name: id.user, Groups: id.groups}, baseConfig())
	if err != nil {
		return nil, fmt.Errorf("add user %s: %w", id.user, err)
	}
	return u.Config(), nil
}

func runBump(sc *Scenario, inv Invocation) error {
	sc.mu.Lock()
	sc.bumps++
	n := sc.bumps
	sc.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{"racekit.dev/bump": fmt.Sprint(n)}}})
	return sc.patch(inv.Args[0], inv.Args[1], types.MergePatchType, body)
}

func runAdopt(sc *Scenario, inv Invocation) error {
	o, err := sc.object(inv.Args[2])
	if err != nil {
		return usageErr("%v", err)
	}
	owner, err := sc.read(o)
	if err != nil {
		return fmt.Errorf("read the owner %s: %w", o, err)
	}
	ref := metav1.NewControllerRef(owner, owner.GroupVersionKind())
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": []metav1.OwnerReference{*ref}}})
	return sc.patch(inv.Args[0], inv.Args[1], types.MergePatchType, body)
}
