package language

import (
	"fmt"
	"strconv"
	"strings"
)

// requiresCommands gate a scenario on the release it runs against, so that
// the release matrix (make matrix) skips a scenario of a behaviour one
// release does not have, saying why, instead of failing it or passing it
// for the wrong reason.
var requiresCommands = []*Command{
	{
		Name: "requires", Args: "kubernetes{>=,>,<=,<,==}VERSION", Group: "setup", MinArgs: 1, MaxArgs: 1,
		Summary: "skip the scenario, saying why, unless the control plane's Kubernetes release is as VERSION says: requires kubernetes>=1.35",
		Detail: "skip the scenario, saying why, unless the control plane's Kubernetes release (its /version) is as VERSION says: requires kubernetes>=1.35, " +
			"requires kubernetes<1.37.2 or requires kubernetes==1.36; VERSION has one to three numbers and compares on those it has. " +
			"A skipped scenario is neither a pass nor a failure: go test reports it skipped, and racekit run and Play say skipped with the reason. Put it before the scenario's first command",
		Run: runRequires,
	},
}

// constraint is what requires asks of the release.
type constraint struct {
	op      string
	version []int
}

// parseConstraint reads kubernetes>=1.35.
func parseConstraint(arg string) (constraint, error) {
	rest, ok := strings.CutPrefix(arg, "kubernetes")
	if !ok {
		return constraint{}, UsageError("requires %q: want kubernetes>=VERSION (or >, <=, <, ==): only the Kubernetes release can be required", arg)
	}
	for _, op := range []string{">=", "<=", "==", ">", "<"} {
		if v, ok := strings.CutPrefix(rest, op); ok {
			version, err := parseVersion(v)
			if err != nil {
				return constraint{}, UsageError("requires %q: %v", arg, err)
			}
			return constraint{op, version}, nil
		}
	}
	return constraint{}, UsageError("requires %q: want an operator right after kubernetes: >=, >, <=, < or ==", arg)
}

// parseVersion reads one to three dot-separated numbers, with or without a
// leading v.
func parseVersion(s string) ([]int, error) {
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if len(parts) > 3 || s == "" {
		return nil, fmt.Errorf("version %q: want one to three numbers, such as 1.35 or 1.35.4", s)
	}
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("version %q: want one to three numbers, such as 1.35 or 1.35.4", s)
		}
		out[i] = n
	}
	return out, nil
}

// holds reports whether release (such as 1.35.4) satisfies c, comparing
// on as many numbers as c's version has.
func (c constraint) holds(release []int) bool {
	cmp := 0
	for i, want := range c.version {
		got := 0
		if i < len(release) {
			got = release[i]
		}
		if got != want {
			cmp = 1
			if got < want {
				cmp = -1
			}
			break
		}
	}
	switch c.op {
	case ">=":
		return cmp >= 0
	case ">":
		return cmp > 0
	case "<=":
		return cmp <= 0
	case "<":
		return cmp < 0
	}
	return cmp == 0
}

func runRequires(sc *Scenario, inv Invocation) error {
	c, err := parseConstraint(inv.Args[0])
	if err != nil {
		return err
	}
	running := sc.cp.Version()
	release, err := parseVersion(running)
	if err != nil {
		return fmt.Errorf("the control plane's version %q: %w", running, err)
	}
	if c.holds(release) {
		return nil
	}
	return &Skip{Reason: fmt.Sprintf("requires %s, and the control plane runs Kubernetes %s", inv.Args[0], running)}
}

// Skip is the error of a command that skips the rest of the scenario:
// neither a pass nor a failure. The script runner skips the test with its
// reason.
type Skip struct{ Reason string }

func (s *Skip) Error() string { return "skipped: " + s.Reason }
