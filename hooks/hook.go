package hooks

import (
	"context"
	"fmt"
	"strings"
)

// Every is the Occurrence of a hook that fires on every matching call.
const Every = 0

// Matcher selects API calls. An empty field matches anything.
type Matcher struct {
	Actor       string
	Verb        string
	Resource    string
	Name        string
	Subresource string
	// Namespace, when set, keeps the matcher to calls in that namespace
	// and calls that name none (a cluster-scoped object, or a read of
	// every namespace): a scenario's hooks and counts are about its own
	// namespace, and a controller that runs on its own may act in
	// another's. String does not show it.
	Namespace string
}

// Matches reports whether c is selected by m. A matcher without a
// subresource matches only calls on the object itself, so that "update
// webapps/web" does not fire on a status update.
func (m Matcher) Matches(c Call) bool {
	return (m.Actor == "" || m.Actor == c.Actor) &&
		(m.Verb == "" || m.Verb == c.Verb) &&
		(m.Resource == "" || m.Resource == c.Resource) &&
		(m.Name == "" || m.Name == c.Name) &&
		(m.Namespace == "" || c.Namespace == "" || m.Namespace == c.Namespace) &&
		m.Subresource == c.Subresource
}

// String renders m the way a scenario writes it: "actor verb object".
func (m Matcher) String() string {
	or := func(s string) string {
		if s == "" {
			return "*"
		}
		return s
	}
	obj := or(m.Resource)
	if m.Name != "" {
		obj += "/" + m.Name
	}
	if m.Subresource != "" {
		obj += "/" + m.Subresource
	}
	return or(m.Actor) + " " + or(m.Verb) + " " + obj
}

// Event is what a hook's action learns about the call that fired it.
type Event struct {
	Point Point
	Call  Call
	// Context is the context of the request that fired the hook: an
	// action can end the caller's work with Abort through it.
	Context context.Context
	// Code is the response's HTTP status; zero at Before.
	Code int
	// Body is the response body at After, for calls that are not watches;
	// the action must not change it.
	Body []byte
}

// Hook is an action bound to a point in matching API calls.
type Hook struct {
	Point Point
	Match Matcher
	// Occurrence is the 1-based count of matching calls, since the hook was
	// armed, on which it fires; Every fires on all of them.
	Occurrence int
	// Label names the hook in traces and failures.
	Label string
	// Action runs synchronously on the caller's goroutine. Its error is
	// kept on the Armed hook; it does not change the matched call.
	Action func(Event) error
}

// String renders the hook's trigger: "after controller get deployments/web 1st".
func (h Hook) String() string {
	occ := "every"
	if h.Occurrence != Every {
		occ = Ordinal(h.Occurrence)
	}
	return strings.Join([]string{h.Point.Name, h.Match.String(), occ}, " ")
}

// Ordinal renders n as 1st, 2nd, 3rd, 4th, 11th, 21st, ...
func Ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
