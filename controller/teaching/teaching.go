package teaching

import (
	"fmt"
	"strings"

	"github.com/racekit/racekit/internal/hint"
)

// The names of the variants, as racekit run --bug and reports spell them.
const (
	StaleObject             = "stale-object"
	RVPlusOne               = "rv-plus-one"
	UnboundedRetry          = "unbounded-retry"
	SideEffectInRetry       = "side-effect-in-retry"
	StatusNoGenerationCheck = "status-no-generation-check"
	RetryEverything         = "retry-everything"
	BlindUpdate             = "blind-update"
	NoOwnerCheck            = "no-owner-check"
	FinalizerBeforeCleanup  = "finalizer-before-cleanup"
)

// Variant is one teaching variant of the reference controller. The zero
// Variant is the production controller.
type Variant struct {
	name string
}

// info is what the table says of a variant.
type info struct {
	summary string
	rule    string
}

var (
	table = map[string]info{}
	order []string
)

// add registers a variant and refuses a second one of the same name.
func add(name, summary, rule string) {
	if _, dup := table[name]; dup {
		panic(fmt.Sprintf("teaching: variant %q registered twice", name))
	}
	table[name] = info{summary: summary, rule: rule}
	order = append(order, name)
}

func init() {
	add(StaleObject,
		"the conflict retry reuses the object it read before the retry instead of reading it again",
		"after a conflict, read the object again")
	add(RVPlusOne,
		"on a conflict, it sets resourceVersion to the refused value plus one instead of reading the object again",
		"a resourceVersion is opaque: send only one the server gave you")
	add(UnboundedRetry,
		"it retries conflicts without limit",
		"retries are bounded; when they run out, the Conflict goes back to the caller")
	add(SideEffectInRetry,
		"it registers the WebApp with the registry inside the Deployment's retry, once per attempt",
		"a side effect runs outside any retry, once per reconcile")
	add(StatusNoGenerationCheck,
		"it confirms status without checking that the generation is still the one it read, and stamps the generation it last read",
		"status confirms only the generation the reconcile acted on")
	add(RetryEverything,
		"it retries every error, not only conflicts",
		"only a 409 Conflict is retried; any other error goes back at once")
	add(BlindUpdate,
		"it updates the Deployment without a resourceVersion: an unconditional write, which the API allows for Deployments",
		"a write carries the resourceVersion it was decided on")
	add(NoOwnerCheck,
		"it updates a Deployment whose controlling owner is another object",
		"touch only what you control")
	add(FinalizerBeforeCleanup,
		"on deletion, it removes its finalizer before it deregisters the WebApp: killed in between, it leaves a registry record that no WebApp owns",
		"a finalizer comes off only after the cleanup it guards is done, so that a crash at any moment leaves the work to the next reconcile")
}

// Variants returns every variant, in the order they are documented.
func Variants() []Variant {
	out := make([]Variant, len(order))
	for i, n := range order {
		out[i] = Variant{name: n}
	}
	return out
}

// Names returns the names of every variant, in the order of Variants.
func Names() []string {
	return append([]string(nil), order...)
}

// Lookup returns the variant called name. An unknown name is an error that
// suggests the nearest name and lists them all.
func Lookup(name string) (Variant, error) {
	if _, ok := table[name]; !ok {
		return Variant{}, fmt.Errorf("unknown teaching variant %q%s; the variants are %s", name, hint.DidYouMean(name, order), strings.Join(order, ", "))
	}
	return Variant{name: name}, nil
}

// Name returns the variant's name, or "" for the production controller.
func (v Variant) Name() string { return v.name }

// IsZero reports whether v is the production controller.
func (v Variant) IsZero() bool { return v.name == "" }

// Is reports whether v is the variant called name.
func (v Variant) Is(name string) bool { return v.name != "" && v.name == name }

// Summary says in one line what the variant does wrong.
func (v Variant) Summary() string {
	if v.IsZero() {
		return "the production controller, which keeps every rule"
	}
	return table[v.name].summary
}

// Rule is the rule the variant breaks, or "" for the production controller.
func (v Variant) Rule() string { return table[v.name].rule }

// String returns the name, or "production" for the zero Variant.
func (v Variant) String() string {
	if v.IsZero() {
		return "production"
	}
	return v.name
}
