package language

import (
	"fmt"
	"slices"
	"strings"
)

// verbAliases maps what a newcomer may write for a call, an HTTP method or
// a kubectl command, to the Kubernetes verb that the hooks and the trace
// name it by: an HTTP PUT of an object is an update, a POST a create.
var verbAliases = map[string]struct{ verb, why string }{
	"put":     {"update", "an HTTP PUT of an object"},
	"post":    {"create", "an HTTP POST to a collection"},
	"replace": {"update", "kubectl replace, an HTTP PUT,"},
	"apply":   {"patch", "kubectl apply, an HTTP PATCH,"},
	"edit":    {"update", "kubectl edit, an HTTP PUT,"},
	"read":    {"get", "a read of one object"},
	"remove":  {"delete", "a removal"},
}

// verbHint returns the "did you mean" hint for verb, which is not among
// verbs: for an HTTP method or a kubectl command, the Kubernetes verb it
// is (put is update, not the nearest spelling, get); otherwise the nearest
// verb, or "".
func verbHint(verb string, verbs []string) string {
	if a, ok := verbAliases[strings.ToLower(verb)]; ok && slices.Contains(verbs, a.verb) {
		return fmt.Sprintf(" (%s is the Kubernetes verb %s: did you mean %q?)", a.why, a.verb, a.verb)
	}
	return suggest(verb, verbs)
}
