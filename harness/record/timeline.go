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
// refusals stand out.
func Timeline(rows []Row, color bool) string {
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
		if !r.IsCall() {
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
	for _, r := range rows {
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
func Mermaid(rows []Row) string { return MermaidMarked(rows, nil) }

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
	for _, r := range rows {
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
