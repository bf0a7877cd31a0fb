package hooks

import (
	"net/http"
	"strings"
)

// ParseServiceRequest derives the Call for req, a request made by actor to
// a service outside the API server, such as the reference controller's
// registry: its path is /RESOURCE[/NAME] or /RESOURCE/NAMESPACE/NAME, and
// its verb follows from the HTTP method as a Kubernetes verb would (a GET
// without a name is a list, or a watch with watch=true or watch=1).
func ParseServiceRequest(actor string, req *http.Request) Call {
	c := Call{Actor: actor}
	parts := splitPath(req.URL.Path)
	switch len(parts) {
	case 0:
	case 1:
		c.Resource = parts[0]
	case 2:
		c.Resource, c.Name = parts[0], parts[1]
	default:
		c.Resource, c.Namespace, c.Name = parts[0], parts[1], strings.Join(parts[2:], "/")
	}
	c.Verb = methodVerb(req.Method)
	switch {
	case c.Verb == "get" && c.Name == "":
		c.Verb = "list"
		if w := req.URL.Query().Get("watch"); w == "true" || w == "1" {
			c.Verb = "watch"
		}
	case c.Verb == "delete" && c.Name == "":
		c.Verb = "deletecollection"
	}
	return c
}
