package record

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// palette colours actors on a terminal, in order of first appearance.
var palette = []string{"\x1b[36m", "\x1b[33m", "\x1b[35m", "\x1b[32m", "\x1b[34m", "\x1b[31m"}

const (
	bold  = "\x1b[1m"
	reset = "\x1b[0m"
)

// Timeline renders rows as a numbered table for people: who called what,
// the resourceVersion sent and received, the answer, and the hooks that
// fired and the changes of what an actor is shown, inline where they
// happened. With color, each actor has its colour and
// refusals stand out. An actor whose background reads (Background) span
// more than FoldAt resources has them folded into one line where the
// first was, so that kube-controller-manager's informers (a list and a
// watch of each of some seventy resources, and its discovery) do not bury
// the scenario's story; TimelineUnfolded shows every row.
func Timeline(rows []Row, color bool) string { return timeline(rows, color, false) }

// TimelineUnfolded renders rows as Timeline does, every call on a line of
// its own: none folded.
func TimelineUnfolded(rows []Row, color bool) string { return timeline(rows, color, true) }

// FoldAt is how many resources one actor's background reads may span
// before a timeline folds them. An operator caches a dozen kinds or so,
// and keeps the number across its restarts; kube-controller-manager's
// garbage collector and namespace controller cache every kind the API
// server serves.
const FoldAt = 20

// Background reports whether r is a read that fills or keeps a cache, or
// discovers the API: a list or a watch of a collection, or a GET of a
// discovery path (/api, /apis, /version, /openapi), answered with success.
// A refused or unanswered read, a read of one name, and a call to a
// service outside the API server are never background: they stand out.
func Background(r Row) bool {
	if !r.IsCall() || r.Service != "" || r.Code < 200 || r.Code >= 300 {
		return false
	}
	switch r.Verb {
	case "list", "watch":
		return !strings.Contains(r.Object, "/")
	case "get":
		return discoveryPath(r.Object)
	}
	return false
}

// discoveryPath reports whether p is a path a client reads to discover
// the API: /api, /apis and what is under them, /version, /openapi/....
func discoveryPath(p string) bool {
	for _, root := range []string{"/api", "/apis", "/version", "/openapi"} {
		if p == root || strings.HasPrefix(p, root+"/") {
			return true
		}
	}
	return false
}

// fold is what a timeline folds: for each actor folded, the index in rows
// of its first folded row, where the fold's line goes, and the resources
// of its reads that stay shown, those whose view a scenario changed (a
// hold, a stale restart): they are the scenario's story.
type fold struct {
	actors map[string]bool
	first  map[string]int
	kept   map[[2]string]bool
}

// folding returns what a timeline of rows folds.
func folding(rows []Row) fold {
	f := fold{actors: map[string]bool{}, first: map[string]int{}, kept: map[[2]string]bool{}}
	resources := map[string]map[string]bool{}
	for _, r := range rows {
		if v := r.View; v != nil && v.Actor != "" {
			f.kept[[2]string{v.Actor, v.Resource}] = true
		}
		if Background(r) && r.Verb != "get" {
			if resources[r.Actor] == nil {
				resources[r.Actor] = map[string]bool{}
			}
			resources[r.Actor][r.Where()] = true
		}
	}
	for a, res := range resources {
		if len(res) > FoldAt {
			f.actors[a] = true
		}
	}
	for i, r := range rows {
		if _, ok := f.first[r.Actor]; !ok && f.hides(r) {
			f.first[r.Actor] = i
		}
	}
	return f
}

// hides reports whether the timeline folds r away.
func (f fold) hides(r Row) bool {
	if !f.actors[r.Actor] || !Background(r) {
		return false
	}
	return r.Verb == "get" || !f.kept[[2]string{r.Actor, r.Object}]
}

// line says what the timeline folded of actor's rows: how many lists,
// watches and discovery reads, of how many resources.
func (f fold) line(rows []Row, actor string) string {
	var lists, watches, discovery int
	resources := map[string]bool{}
	for _, r := range rows {
		if r.Actor != actor || !f.hides(r) {
			continue
		}
		switch r.Verb {
		case "list":
			lists++
		case "watch":
			watches++
		default:
			discovery++
			continue
		}
		resources[r.Where()] = true
	}
	var reads, parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{lists, "lists"}, {watches, "watches"}} {
		if c.n > 0 {
			reads = append(reads, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if len(reads) > 0 {
		parts = append(parts, fmt.Sprintf("%s of %d resources", strings.Join(reads, " and "), len(resources)))
	}
	if discovery > 0 {
		parts = append(parts, fmt.Sprintf("%d discovery reads", discovery))
	}
	return fmt.Sprintf("%s's background reads folded, here and after: %s (racekit run --unfold shows each)", actor, strings.Join(parts, ", "))
}

func timeline(rows []Row, color, unfolded bool) string {
	f := fold{}
	if !unfolded {
		f = folding(rows)
	}
	hidden := f.hides
	header := []string{"#", "ACTOR", "CALL", "SENT", "GOT", "STATUS"}
	w := make([]int, len(header))
	for i, h := range header {
		w[i] = len(h)
	}
	cells := func(r Row) []string {
		return []string{strconv.Itoa(r.Seq), r.Actor, r.Verb + " " + r.Where(), r.SentRV, r.Got(), r.Status()}
	}
	colors := map[string]string{}
	for _, r := range rows {
		if !r.IsCall() || hidden(r) {
			continue
		}
		for i, c := range cells(r) {
			w[i] = max(w[i], len(c))
		}
		if _, ok := colors[r.Actor]; !ok {
			colors[r.Actor] = palette[len(colors)%len(palette)]
		}
	}
	paint := func(code, s string) string {
		if !color || code == "" {
			return s
		}
		return code + s + reset
	}
	var b strings.Builder
	line := func(c []string, actorColor, statusColor string) {
		var parts []string
		for i, s := range c {
			pad := strings.Repeat(" ", w[i]-len(s))
			switch i {
			case 0:
				parts = append(parts, pad+s) // numbers align right
			case 1:
				parts = append(parts, paint(actorColor, s)+pad)
			case len(c) - 1:
				parts = append(parts, paint(statusColor, s))
			default:
				parts = append(parts, s+pad)
			}
		}
		b.WriteString(strings.TrimRight(strings.Join(parts, "  "), " ") + "\n")
	}
	line(header, "", "")
	for i, r := range rows {
		if hidden(r) {
			if f.first[r.Actor] == i {
				text := fmt.Sprintf("%*s  ⤷ %s", w[0], "", f.line(rows, r.Actor))
				b.WriteString(paint(bold, text) + "\n")
			}
			continue
		}
		if h := r.Hook; h != nil {
			text := fmt.Sprintf("%*s  ⤷ hook %d (%s): %s", w[0], "", h.ID, h.Trigger, h.Action)
			b.WriteString(paint(bold, text) + "\n")
			continue
		}
		if v := r.View; v != nil {
			text := fmt.Sprintf("%*s  ⤷ view: %s", w[0], "", v)
			b.WriteString(paint(bold, text) + "\n")
			continue
		}
		if s := r.Settled; s != nil {
			text := fmt.Sprintf("%*s  ⤷ idle: %s", w[0], "", s)
			b.WriteString(paint(bold, text) + "\n")
			continue
		}
		status := ""
		if r.Code >= 400 || r.Code == 0 {
			status = bold + "\x1b[31m"
		}
		line(cells(r), colors[r.Actor], status)
	}
	return b.String()
}

// Mermaid renders rows as a Mermaid sequenceDiagram: one participant per
// actor and one for the API server (or the registry), a request arrow and a
// response arrow per exchange, a note where a hook fired, and a note over
// the actor whose view changed (over the API server for a mark).
// Background reads are folded as in Timeline, into a note over the actor.
func Mermaid(rows []Row) string { return MermaidMarked(rows, nil) }

// MermaidUnfolded renders rows as Mermaid does, every call an arrow of
// its own: none folded.
func MermaidUnfolded(rows []Row) string { return sequenceDiagram(rows, nil, true) }

// Mark is a note a diagram draws at a point of one of its calls: before
// its request or after its answer, over its actor, on a coloured ground.
type Mark struct {
	// Color is a CSS colour ("rgb(255, 205, 210)"); Text the note's text.
	Color, Text string
}

// MermaidMarked renders rows as Mermaid does, with the marks mark returns
// for each call (a watch aside) and point ("before" or "after"): explore's
// diagram of a workload with its moments marked. mark may be nil.
func MermaidMarked(rows []Row, mark func(r Row, point string) []Mark) string {
	return sequenceDiagram(rows, mark, false)
}

func sequenceDiagram(rows []Row, mark func(r Row, point string) []Mark, unfolded bool) string {
	f := fold{}
	if !unfolded {
		f = folding(rows)
	}
	var b strings.Builder
	b.WriteString("sequenceDiagram\n")
	seen := map[string]bool{}
	var actors []string
	for _, r := range rows {
		actor := r.Actor
		switch {
		case r.Hook != nil:
			continue
		case r.View != nil:
			if actor = r.View.Actor; actor == "" {
				continue
			}
		case r.Settled != nil:
			actor = r.Settled.Actor
		}
		if !seen[actor] {
			seen[actor] = true
			actors = append(actors, actor)
		}
	}
	for _, a := range actors {
		fmt.Fprintf(&b, "    participant %s\n", mermaidID(a))
	}
	servers := serversOf(rows)
	for _, s := range servers {
		fmt.Fprintf(&b, "    participant %s as %s\n", mermaidID(s), s)
	}
	for i, r := range rows {
		if f.hides(r) {
			if f.first[r.Actor] == i {
				fmt.Fprintf(&b, "    Note over %s: %s\n", mermaidID(r.Actor), mermaidText(f.line(rows, r.Actor)))
			}
			continue
		}
		if h := r.Hook; h != nil {
			// Over the actor whose call fired the hook, and the server it
			// was calling: the hook runs between that call's request and
			// its answer (or before the request).
			over := h.Caller
			if !seen[over] && len(actors) > 0 {
				over = actors[0]
			}
			fmt.Fprintf(&b, "    Note over %s: hook %d (%s): %s\n", mermaidID(over), h.ID, mermaidText(h.Trigger), mermaidText(h.Action))
			continue
		}
		if v := r.View; v != nil {
			over := v.Actor
			if over == "" {
				over = "kube-apiserver"
			}
			fmt.Fprintf(&b, "    Note over %s: %s\n", mermaidID(over), mermaidText("view: "+v.String()))
			continue
		}
		if s := r.Settled; s != nil {
			fmt.Fprintf(&b, "    Note over %s: %s\n", mermaidID(s.Actor), mermaidText("idle: "+s.String()))
			continue
		}
		notes := func(point string) {
			if mark == nil || r.Verb == "watch" {
				return
			}
			for _, m := range mark(r, point) {
				fmt.Fprintf(&b, "    rect %s\n    Note over %s: %s\n    end\n", m.Color, mermaidID(r.Actor), mermaidText(m.Text))
			}
		}
		notes("before")
		srv := mermaidID(serverOf(r))
		req := r.Verb + " " + r.Where()
		if r.SentRV != "" {
			req += " (sent " + r.SentRV + ")"
		}
		fmt.Fprintf(&b, "    %s->>%s: %d. %s\n", mermaidID(r.Actor), srv, r.Seq, mermaidText(req))
		resp := r.Status()
		if g := r.Got(); g != "" {
			resp += " " + g
		}
		arrow := "-->>"
		if r.Code >= 400 || r.Code == 0 {
			arrow = "--x"
		}
		fmt.Fprintf(&b, "    %s%s%s: %s\n", srv, arrow, mermaidID(r.Actor), mermaidText(resp))
		notes("after")
	}
	return b.String()
}

// serverOf names the service an exchange went to: the one a controller
// named (Instance.HTTPClient), or the API server.
func serverOf(r Row) string {
	if r.Service != "" {
		return r.Service
	}
	return "kube-apiserver"
}

func serversOf(rows []Row) []string {
	set := map[string]bool{}
	for _, r := range rows {
		if r.IsCall() || (r.View != nil && r.View.Actor == "") {
			set[serverOf(r)] = true
		}
	}
	var out []string
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// mermaidID makes a participant id: letters, digits and underscores.
func mermaidID(s string) string {
	if s == "" {
		s = "unknown"
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// mermaidText escapes what Mermaid's sequence grammar gives a meaning to in
// message text: ";" ends a statement, "#" starts an entity, and ":" is not
// allowed in a note's text after the first.
func mermaidText(s string) string {
	r := strings.NewReplacer(";", "#59;", "#", "#35;", ":", "#58;", "\n", " ")
	return r.Replace(s)
}

// JSON renders rows as an indented JSON array, for tools.
func JSON(rows []Row) (string, error) {
	b, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode trace: %w", err)
	}
	return string(b) + "\n", nil
}
