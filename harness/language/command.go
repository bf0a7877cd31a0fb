package language

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/racekit/racekit/internal/hint"
)

// Negation says what "!" before a command means.
type Negation int

const (
	// NoNegation: the command refuses "!".
	NoNegation Negation = iota
	// NegAPIError: "!" expects the API server to refuse the call. Any other
	// failure (bad arguments, a missing snapshot) still fails the script.
	NegAPIError
	// NegSelf: the command gives "!" its own meaning (an assertion of
	// absence, say) and handles it in Run.
	NegSelf
)

// Invocation is one call of a command.
type Invocation struct {
	Neg    bool
	Args   []string
	Stdout io.Writer
	// Pos is the script position, file:line.
	Pos string
	// InHook is true when the command runs as a hook's action; Ctx is
	// then the context of the call that fired the hook.
	InHook bool
	Ctx    context.Context
	// Setenv sets a script variable ($KEY) for the lines that follow, and
	// Defer runs f when the script ends, passed or failed. Both are nil in
	// a hook's action: commands that need them are not Hookable.
	Setenv func(key, value string)
	Defer  func(f func())
}

// Command is a scenario command. Usage is data: help, the language reference
// and argument checks all come from these fields.
type Command struct {
	Name string
	// Args is the usage after the name, such as "ACTOR RESOURCE/NAME KEY=VALUE".
	Args string
	// Summary is one sentence for help's list and the reference's table, at
	// most MaxSummary bytes on one line, so that a list of sixty commands
	// stays a list.
	Summary string
	// Detail, when a Summary cannot say enough, is what the command does in
	// full, its forms and what it promises: help scenario NAME and the
	// language reference's section of details show it in place of the
	// Summary.
	Detail string
	// Group orders help: setup, write, race, assert.
	Group string
	// MinArgs and MaxArgs bound the arguments; MaxArgs -1 means no bound.
	MinArgs, MaxArgs int
	Negation         Negation
	// Hookable commands may run as a hook's action.
	Hookable bool
	// Hidden commands are the harness's own plumbing: help and the
	// language reference leave them out.
	Hidden bool
	Run    func(sc *Scenario, inv Invocation) error
}

// Usage returns "usage: NAME ARGS".
func (c *Command) Usage() string {
	return strings.TrimSpace("usage: " + c.Name + " " + c.Args)
}

// Sorted returns cmds grouped as help shows them, by name within a group.
func Sorted(cmds map[string]*Command) []*Command {
	order := map[string]int{"setup": 0, "write": 1, "race": 2, "run": 3, "assert": 4}
	out := make([]*Command, 0, len(cmds))
	for _, c := range cmds {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if order[out[i].Group] != order[out[j].Group] {
			return order[out[i].Group] < order[out[j].Group]
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// ErrUnavailable marks a command that could not have what the run needs
// from outside it, such as a fixed port another racekit process held past
// the wait: no claim was made, and explore counts such a run n/a, never a
// finding.
var ErrUnavailable = errors.New("unavailable")

// ErrSettled marks a wait that Options.EndWaitsOnSettle ended early: what
// it waited for had not come when everything that runs had settled. A
// settled controller may still act later (a RequeueAfter, a poll of its
// own), so such a failure claims nothing about the scenario; the failure
// says so (Failure.Settled), and explore auto's shrinker, the one reader
// that sets the option, keeps the line it tried to leave out.
var ErrSettled = errors.New("ended on settling")

// Usage is an error in a line's own arguments: a bad line, not a claim
// that does not hold nor a call that failed. Command.Call adds the
// command's usage line to its message; the failure says so (Failure.Usage),
// try does not go on after it, and a failing twin must not fail on one.
// UsageError makes one; errors.AsType[*Usage] tells one, wrapped or not.
type Usage struct{ text string }

func (u *Usage) Error() string { return u.text }

// UsageError returns a Usage error about a command's arguments, for a
// Command's Run: "usage: " and the message, to which the failure adds the
// command's usage line.
func UsageError(format string, args ...any) error {
	return &Usage{text: "usage: " + fmt.Sprintf(format, args...)}
}

// isUsage reports whether err is, or wraps, a Usage error.
func isUsage(err error) bool {
	_, ok := errors.AsType[*Usage](err)
	return ok
}

// MaxSummary is the longest racekit's own commands' Summaries are (a test
// holds them to it; a project's own commands are not refused for a longer
// one): what a command says beyond that goes in its Detail.
const MaxSummary = 200

// groups are the groups a command may belong to, in help's order.
var groups = []string{"setup", "write", "race", "run", "assert"}

// checkCommand reports what makes c, one of Options.Commands,
// unusable beside the commands in have.
func checkCommand(c *Command, have map[string]*Command) error {
	switch {
	case c == nil:
		return errors.New("a nil command")
	case !commandName.MatchString(c.Name):
		return fmt.Errorf("bad command name %q: want a lower-case word such as replicas", c.Name)
	case have[c.Name] != nil:
		return fmt.Errorf("command %s registered twice", c.Name)
	case c.Run == nil:
		return fmt.Errorf("command %s has no Run", c.Name)
	case !contains(groups, c.Group):
		return fmt.Errorf("command %s: bad group %q: want one of %s", c.Name, c.Group, strings.Join(groups, ", "))
	case c.Summary == "":
		return fmt.Errorf("command %s has no Summary: help and the language reference show it", c.Name)
	}
	return nil
}

// Suggest returns " (did you mean X?)" for a near miss of name among
// candidates, or "": for a Command's usage errors.
func Suggest(name string, candidates []string) string { return suggest(name, candidates) }

// Call checks inv against c's usage data and runs it, giving "!" the
// meaning c declares.
func (c *Command) Call(sc *Scenario, inv Invocation) error {
	if inv.Neg && c.Negation == NoNegation {
		return fmt.Errorf("%s does not take \"!\"; %s", c.Name, c.Usage())
	}
	if n := len(inv.Args); n < c.MinArgs || (c.MaxArgs >= 0 && n > c.MaxArgs) {
		return &Usage{text: fmt.Sprintf("wrong number of arguments (%d); %s", n, c.Usage())}
	}
	neg := inv.Neg
	if c.Negation == NegAPIError {
		inv.Neg = false
	}
	err := c.Run(sc, inv)
	if isUsage(err) {
		return &Usage{text: fmt.Sprintf("%s; %s", strings.TrimPrefix(err.Error(), "usage: "), c.Usage())}
	}
	if !neg || c.Negation != NegAPIError {
		return err
	}
	var status apierrors.APIStatus
	switch {
	case err == nil:
		return fmt.Errorf("succeeded, but \"!\" expects the API server to refuse it")
	case errors.As(err, &status):
		return nil // the refusal the script expects; the trace shows it
	default:
		return err
	}
}

// suggest returns a " (did you mean X?)" hint for a near miss of name
// among candidates, or "".
func suggest(name string, candidates []string) string {
	return hint.DidYouMean(name, candidates)
}

var commandName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,40}$`)

// Table returns every command a scenario may use, by name: the language's
// own, the extensions', and extra (a project's own commands). It refuses a
// name given twice and a command that cannot be used, naming it, so that
// help can list every command once.
func Table(exts []*Extension, extra []*Command) (map[string]*Command, error) {
	cmds := map[string]*Command{}
	add := func(from string, cs []*Command) error {
		for _, c := range cs {
			if err := checkCommand(c, cmds); err != nil && from != "" {
				return fmt.Errorf("%s: %w", from, err)
			} else if err != nil {
				return err
			}
			cmds[c.Name] = c
		}
		return nil
	}
	if err := add("", Builtins()); err != nil {
		return nil, err
	}
	for _, e := range exts {
		if err := add("extension "+e.Name, e.Commands); err != nil {
			return nil, err
		}
	}
	if err := add("", extra); err != nil {
		return nil, err
	}
	return cmds, nil
}

// Builtins returns the language's own commands: setup, writers, hooks,
// the assertions on the wire and on objects, and try, repeat and do.
func Builtins() []*Command {
	var out []*Command
	for _, cs := range [][]*Command{actorCommands, writeCommands, onCommands, assertCommands, flowCommands, doCommands, requiresCommands} {
		out = append(out, cs...)
	}
	return out
}

// ParseOptions reads KEY=VALUE arguments whose keys are among allowed.
func ParseOptions(args []string, allowed []string) (map[string]string, error) {
	opts := map[string]string{}
	for _, arg := range args {
		k, v, ok := strings.Cut(arg, "=")
		if !ok {
			return nil, UsageError("bad option %q: want KEY=VALUE, with KEY one of %s", arg, strings.Join(allowed, ", "))
		}
		if !slices.Contains(allowed, k) {
			return nil, UsageError("unknown option %q%s; options are %s", k, suggest(k, allowed), strings.Join(allowed, ", "))
		}
		if _, dup := opts[k]; dup {
			return nil, UsageError("option %s given twice", k)
		}
		opts[k] = v
	}
	return opts, nil
}

// DurationOption reads the duration option key, or returns def.
func DurationOption(opts map[string]string, key string, def time.Duration) (time.Duration, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, UsageError("bad %s=%s: want a positive duration such as 5s", key, v)
	}
	return d, nil
}
