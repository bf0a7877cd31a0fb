package running

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/harness/views"
	"github.com/racekit/racekit/hooks"
)

// Waiting for a controller that runs on its own: await waits until the
// wire shows what must happen, idle until the controller has gone quiet.
// Both wake on the recorder's changes, never on a poll, and both are
// bounded.
var waitCommands = []*language.Command{
	{
		Name: "await", Args: "ACTOR VERB RESOURCE[/NAME[/SUB]] CODE [COUNT] [since=MARK] [within=DURATION]", Group: "run", MinArgs: 4, MaxArgs: 7,
		Summary: "wait until the trace holds COUNT of ACTOR's matching calls answered with CODE, and none that matches is in flight",
		Detail: "wait until the trace holds COUNT (default 1) of ACTOR's calls that match and were answered with the HTTP status CODE, such as await controller update deployments/web 409, and none that match is in flight, its after-hooks' actions included: what a running controller must do, waited for as it happens on the wire; since=MARK counts only the calls sent after mark MARK was taken (a restarted name's new life, whose first life may or may not have made such a call); " +
			"fails after DURATION (default " + DefaultWait.String() + "), at once when a hold of the actor's failed (hold ... at= a compacted resourceVersion), as soon as the actor's controller or process has ended (on its own, halted or crashed: the message says which; a restart's new life is waited for), or at once when nothing that runs could make the call (ACTOR runs nothing, has no call in flight, and no armed hook is left whose action could act as ACTOR), with what the actor did and the trace's tail",
		Run: runAwait,
	},
}

// DefaultWait bounds await and idle: far longer than a controller takes to
// answer an event on a loaded machine, far shorter than go test's timeout.
const DefaultWait = 30 * time.Second

// awaitOptions are await's: within=, and since=MARK, which counts only the
// calls sent after mark MARK (the calls of a restarted name's new life,
// when its first life may have made such calls too, or not).
var awaitOptions = []string{"within", "since"}

// errWaited is what a wait that ran out of time wraps.
var errWaited = errors.New("ran out of time")

func runAwait(sc *language.Scenario, inv language.Invocation) error {
	args := inv.Args
	var opts []string
	for len(args) > 0 && strings.Contains(args[len(args)-1], "=") {
		opts, args = append(opts, args[len(args)-1]), args[:len(args)-1]
	}
	o, err := language.ParseOptions(opts, awaitOptions)
	if err != nil {
		return err
	}
	after := 0
	if since, ok := o["since"]; ok {
		if after, err = sc.MarkSeq(since); err != nil {
			return err
		}
	}
	within, err := language.DurationOption(o, "within", waitTimeout(sc))
	if err != nil {
		return err
	}
	if len(args) < 4 || len(args) > 5 {
		return language.UsageError("want ACTOR VERB RESOURCE[/NAME[/SUB]] CODE [COUNT], got %q", strings.Join(inv.Args, " "))
	}
	trig, err := sc.ParseTrigger(append([]string{"after"}, args[:3]...))
	if err != nil {
		return err
	}
	if trig.Match.Actor == "" {
		return language.UsageError("await names one actor, not *")
	}
	code, err := strconv.Atoi(args[3])
	if err != nil || code < 100 || code > 599 {
		return language.UsageError("bad status %q: want an HTTP status such as 200 or 409", args[3])
	}
	count := 1
	if len(args) == 5 {
		if count, err = strconv.Atoi(args[4]); err != nil || count < 1 {
			return language.UsageError("bad count %q: want a number, at least 1", args[4])
		}
	}
	want := fmt.Sprintf("%s %s %s answered %d", trig.Match.Actor, trig.Match.Verb, args[2], code)
	if trig.Match.Verb == "" {
		want = fmt.Sprintf("%s's calls to %s answered %d", trig.Match.Actor, args[2], code)
	}
	if count > 1 {
		want += fmt.Sprintf(", %d times", count)
	}
	var settled *allSettled
	if sc.Options().EndWaitsOnSettle {
		settled = newAllSettled(sc, time.Now().Add(within))
		defer settled.stop()
	}
	return waitUntil(sc, within, settled, func() (bool, error) {
		n := 0
		sc.Recorder().Scan(func(x *record.Exchange) {
			if x.Seq > after && x.Code == code && trig.Match.Matches(x.Call) {
				n++
			}
		})
		if err := views.HoldFailed(sc, trig.Match.Actor); err != nil {
			return false, fmt.Errorf("awaited %s, but %w\n%s", want, err, sc.Trace().Tail(15))
		}
		if m := flying(sc, trig.Match); n-m >= count {
			return true, nil
		} else if n >= count {
			return false, nil // done once the calls in flight are
		}
		// Whether anything could still make the call is asked first, and
		// how the actor's life ended after: a crash that lands between
		// the two is then seen as the crash it is, not as nothing
		// running.
		why := nothingCalls(sc, trig.Match.Actor)
		if l := lifeOf(sc, trig.Match.Actor); l != nil {
			if done, _ := l.ended(); (done || l.crash.at() != "") && !l.crash.restarting() {
				return false, fmt.Errorf("awaited %s, but %s\n%s", want, l.describe(), sc.Trace().Tail(15))
			}
		}
		if why != "" {
			return false, fmt.Errorf("awaited %s, but %s; %s\n%s", want, why, actorSummary(sc, trig.Match.Actor), sc.Trace().Tail(15))
		}
		return false, nil
	}, func() error {
		return fmt.Errorf("awaited %s for %v: %s\n%s", want, within, actorSummary(sc, trig.Match.Actor), sc.Trace().Tail(15))
	}, func() error {
		return fmt.Errorf("awaited %s, but everything that runs settled without it%s (%w: the wait ends there, not at its bound, in explore auto's shrinking): %s\n%s", want, settled.why(), language.ErrSettled, actorSummary(sc, trig.Match.Actor), sc.Trace().Tail(15))
	})
}

// flying counts the calls that m matches and that are in flight, hooks and
// all. The recorder, inside the hooks, notes an answer before the
// after-hooks run, so await counts a call only once it is done: a hook's
// action at its after point (a crash, a restart) has happened by the time
// the script goes on. A call not answered yet counts too, which can only
// make await wait for it.
func flying(sc *language.Scenario, m hooks.Matcher) int {
	fs, _ := sc.InFlight().Of(m.Actor)
	n := 0
	for _, fl := range fs {
		if m.Matches(fl.Call()) {
			n++
		}
	}
	return n
}

// waitFor waits until done reports true or an error, waking at each
// change of the recorder and each call that enters or leaves an actor's
// transport, and calls late when within has passed first.
func waitFor(sc *language.Scenario, within time.Duration, done func() (bool, error), late func() error) error {
	return waitUntil(sc, within, nil, done, late, nil)
}

// waitUntil is waitFor that, with settled set, also ends as soon as every
// life that runs has settled while done still reports false, calling
// early (Options.EndWaitsOnSettle).
func waitUntil(sc *language.Scenario, within time.Duration, settled *allSettled, done func() (bool, error), late, early func() error) error {
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		changed, flew := sc.Recorder().Changes(), sc.InFlight().Changes()
		ok, err := done()
		if err != nil || ok {
			return err
		}
		var look <-chan time.Time
		if settled != nil {
			if settled.step() {
				// What done saw may have changed while the lives were
				// looked at: it is asked once more, after them.
				if ok, err := done(); err != nil || ok {
					return err
				}
				return early()
			}
			look = settled.wake()
		}
		select {
		case <-changed:
			settled.changed()
		case <-flew:
			settled.changed()
		case <-look:
		case <-timer.C:
			return fmt.Errorf("%w: %w", errWaited, late())
		case <-sc.Context().Done():
			return sc.Context().Err()
		}
	}
}

// actorSummary says what actor has done so far: its calls, grouped by what
// they were and how they were answered, with the namespace of a call in
// another namespace than the scenario's, which await does not count.
func actorSummary(sc *language.Scenario, actor string) string {
	counts := map[string]int{}
	for _, x := range sc.Trace().Exchanges() {
		if x.Actor != actor {
			continue
		}
		answer := strconv.Itoa(x.Code)
		if x.Code == 0 {
			answer = "no answer yet"
			if x.Err != "" {
				answer = "failed: " + x.Err
			}
		}
		obj := x.Object()
		if x.Foreign {
			obj += " (namespace " + x.Namespace + ")"
		}
		counts[fmt.Sprintf("%s %s → %s", x.Verb, obj, answer)]++
	}
	if len(counts) == 0 {
		return actor + " has made no call"
	}
	var lines []string
	for k, n := range counts {
		lines = append(lines, fmt.Sprintf("  %d× %s", n, k))
	}
	sort.Strings(lines)
	return actor + " made these calls:\n" + strings.Join(lines, "\n")
}

// nothingCalls says why no call of actor can come while the script waits,
// or returns "" when one may: actor runs on its own, has a call in flight,
// or acts, perhaps, in the action of a hook that what runs may still fire
// (bob, annotating as the controller's update goes by).
func nothingCalls(sc *language.Scenario, actor string) string {
	st := stateOf(sc)
	lives := runningLives(sc)
	if len(lives) == 0 {
		return "nothing runs on its own that could make the call, and the script waits here: start a controller or spawn a process first"
	}
	var names []string
	for _, l := range lives {
		if l.actor == actor {
			return ""
		}
		names = append(names, fmt.Sprintf("%s as %s", l.name, l.actor))
	}
	if sc.InFlight().Any() || hooksLeft(sc) {
		return ""
	}
	st.mu.Lock()
	proxied := st.proxied[actor]
	st.mu.Unlock()
	if proxied {
		return "" // a process may use the actor's kubeconfig
	}
	return fmt.Sprintf("nothing that runs calls as %s (running are %s), and no armed hook is left to fire whose action could", actor, strings.Join(names, ", "))
}

// hooksLeft reports whether an armed hook may still fire: one for every
// matching call, or one whose occurrence has not come.
func hooksLeft(sc *language.Scenario) bool {
	for _, a := range sc.Hooks().Hooks() {
		if a.Occurrence == hooks.Every || sc.Hooks().Fired(a) == 0 {
			return true
		}
	}
	return false
}

// waitTimeout is how long await and idle wait unless told.
func waitTimeout(sc *language.Scenario) time.Duration {
	if sc.Options().WaitTimeout > 0 {
		return sc.Options().WaitTimeout
	}
	return DefaultWait
}
