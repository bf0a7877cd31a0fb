package auto

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/record"
)

// condition matches a field of one element of a list kept by its type or
// name (Flatten), such as status.conditions[type=Ready].message: the
// element's path and the field.
var condition = regexp.MustCompile(`^(.*\[(?:type|name)=[^\]]*\])\.([^.\[\]]+)$`)

// conflictText returns the pattern of the message the API server gives a
// write of object (RESOURCE/NAME) that it refuses with 409 Conflict:
// apimachinery's NewConflict writes "Operation cannot be fulfilled on
// RESOURCE[.GROUP] "NAME": ...". A controller that reports the error it
// met writes it into a condition, often behind words of its own.
func conflictText(object string) *regexp.Regexp {
	resource, name, _ := strings.Cut(object, "/")
	name, _, _ = strings.Cut(name, "/") // a subresource's 409 names the object
	return regexp.MustCompile(`Operation cannot be fulfilled on ` + regexp.QuoteMeta(resource) +
		`(\.[a-z0-9.-]+)? ` + regexp.QuoteMeta(strconv.Quote(name)) + `: `)
}

// echoes returns ds without the differences of each condition (an
// element of a list kept by type or name, all its fields) whose message
// in the run carries the API server's 409 Conflict answer to a write
// that one of actors made in rows, and how many it left out.
//
// A plan's fault brings conflicts about: a restarted life's view held
// back writes against versions the server has moved past, and the
// server refuses them, as it must. An operator that writes the error it
// met into a condition does right, and keeps it there until a later
// reconcile rewrites the condition, which may not come in the run (an
// operator that writes success only once its pods are ready, and no pod
// runs). Such a condition says that the fault happened, not what the
// operator did of it: the twin, with no stale view, meets no 409 and so
// cannot set it aside. What the retry that follows cannot undo (a create
// or delete, another field) is still compared.
func echoes(ds []explore.Difference, rows []record.Row, actors []string) ([]explore.Difference, int) {
	var conflicts []*regexp.Regexp
	seen := map[string]bool{}
	for _, r := range rows {
		if r.Code == 409 && r.Service == "" && slices.Contains(actors, r.Actor) && !seen[r.Object] {
			seen[r.Object] = true
			conflicts = append(conflicts, conflictText(r.Object))
		}
	}
	if len(conflicts) == 0 {
		return ds, 0
	}
	echoed := map[string]bool{} // OBJECT ELEMENT-PATH
	for _, d := range ds {
		m := condition.FindStringSubmatch(d.Field)
		if d.Kind != "field" || m == nil || m[2] != "message" {
			continue
		}
		var msg string
		if json.Unmarshal([]byte(d.Run), &msg) != nil {
			continue
		}
		if slices.ContainsFunc(conflicts, func(re *regexp.Regexp) bool { return re.MatchString(msg) }) {
			echoed[d.Object+" "+m[1]] = true
		}
	}
	var out []explore.Difference
	for _, d := range ds {
		if m := condition.FindStringSubmatch(d.Field); d.Kind == "field" && m != nil && echoed[d.Object+" "+m[1]] {
			continue
		}
		out = append(out, d)
	}
	return out, len(ds) - len(out)
}
