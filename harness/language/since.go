package language

import (
	"maps"
	"slices"
	"strings"
	"sync"
)

// The calls sent since a mark: mark NAME (package views) notes where the
// trace was when it was taken, and since=MARK on await, wire and attempts
// counts only the calls sent after it. A restarted controller's new life
// makes the calls its first life made, or not, so "the new life deleted
// nothing" is a count of the calls sent since a mark taken before the
// restart.

// marks are the places of the scenario's marks in its trace.
type marks struct {
	mu sync.Mutex
	// seqs is the last call the trace held when each mark was taken.
	seqs map[string]int
}

var marksKey = NewKey("marks", func(*Scenario) *marks { return &marks{seqs: map[string]int{}} })

// SinceOption is the option of the commands that count calls since a
// mark: since=MARK.
const SinceOption = "since"

// NoteMark notes that mark name is taken now: the calls a later since=name
// counts are those sent after the last call the trace holds now. A mark
// taken again under the same name moves.
func (sc *Scenario) NoteMark(name string) {
	m := marksKey.Of(sc)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seqs[name] = sc.rec.LastSeq()
}

// MarkSeq returns the last call the trace held when mark name was taken,
// or a usage error naming the marks there are: the calls since=name counts
// are those whose Seq is greater.
func (sc *Scenario) MarkSeq(name string) (int, error) {
	m := marksKey.Of(sc)
	m.mu.Lock()
	defer m.mu.Unlock()
	if seq, ok := m.seqs[name]; ok {
		return seq, nil
	}
	names := slices.Sorted(maps.Keys(m.seqs))
	known := "there are no marks yet: take one with mark NAME before the calls to count"
	if len(names) > 0 {
		known = "marks are " + strings.Join(names, ", ")
	}
	return 0, UsageError("since=%s: no mark called %s%s; %s", name, name, suggest(name, names), known)
}

// Since returns the Seq after which the calls counted are sent: that of
// the mark opts' since= names, or 0 (every call) without since=.
func (sc *Scenario) Since(opts map[string]string) (int, error) {
	name, ok := opts[SinceOption]
	if !ok {
		return 0, nil
	}
	return sc.MarkSeq(name)
}

// SplitOptions splits args into a command's positional words and the
// KEY=VALUE options that end them, parsed against allowed.
func SplitOptions(args []string, allowed []string) ([]string, map[string]string, error) {
	var opts []string
	for len(args) > 0 && strings.Contains(args[len(args)-1], "=") {
		opts, args = append(opts, args[len(args)-1]), args[:len(args)-1]
	}
	o, err := ParseOptions(opts, allowed)
	return args, o, err
}

// SinceText says, after a count of calls, which calls it counted: "" for
// every call, " since mark NAME" with since=.
func SinceText(opts map[string]string) string {
	if name, ok := opts[SinceOption]; ok {
		return " since mark " + name
	}
	return ""
}
