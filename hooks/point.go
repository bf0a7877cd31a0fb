package hooks

import (
	"fmt"
	"sort"
)

// Point is a named place in an API call where a hook can run. Points are
// values so that help output and "did you mean" hints can list them.
type Point struct {
	// Name is what a scenario writes: "before" or "after".
	Name string
	// Summary is one line for help output.
	Summary string
}

// The hook points. Before runs the action after the caller has decided what
// to send but before it is sent, so the request carries whatever the caller
// read earlier. After runs the action once the response has arrived but
// before the caller sees it, so the caller acts on what is now stale.
var (
	Before = mustRegister(Point{Name: "before", Summary: "run the action when the request is ready, before it is sent"})
	After  = mustRegister(Point{Name: "after", Summary: "run the action when the response has arrived, before the caller sees it"})
)

var points = map[string]Point{}

// register adds p to the list of points and refuses a second point with the
// same name.
func register(p Point) error {
	if _, dup := points[p.Name]; dup {
		return fmt.Errorf("hook point %q registered twice", p.Name)
	}
	points[p.Name] = p
	return nil
}

func mustRegister(p Point) Point {
	if err := register(p); err != nil {
		panic(err) // a programming error, found at init
	}
	return p
}

// Points returns every hook point, sorted by name.
func Points() []Point {
	out := make([]Point, 0, len(points))
	for _, p := range points {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupPoint returns the point with the given name.
func LookupPoint(name string) (Point, bool) {
	p, ok := points[name]
	return p, ok
}
