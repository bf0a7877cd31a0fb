package main

import (
	"fmt"
	"strings"

	"github.com/racekit/racekit/controller/race"
	"github.com/racekit/racekit/harness"
	"github.com/racekit/racekit/hooks"
	"github.com/racekit/racekit/internal/hint"
)

// The scenario language reference comes in two forms, text for the terminal
// (racekit help scenario) and Markdown for docs/scenario-language.md (racekit
// help scenario --markdown), both from the usage data the commands are built
// from. TestLanguageDoc fails when the committed Markdown is stale.

var groupTitles = map[string]string{
	"setup":  "Setup",
	"write":  "Writers",
	"race":   "The race",
	"run":    "Controllers that run on their own",
	"assert": "Assertions",
}

// languageText renders the reference for a terminal.
func languageText() string {
	var b strings.Builder
	b.WriteString("Scenario commands (testscript; \"!\" before a command negates it where noted):\n")
	group := ""
	for _, c := range harness.Commands(race.Commands()...) {
		if strings.HasPrefix(c.Name, "test-") {
			continue
		}
		if c.Group != group {
			group = c.Group
			fmt.Fprintf(&b, "\n%s:\n", groupTitles[group])
		}
		fmt.Fprintf(&b, "  %s %s\n      %s%s\n", c.Name, c.Args, c.Summary, notes(c))
	}
	b.WriteString("\nHook points:\n")
	for _, p := range hooks.Points() {
		fmt.Fprintf(&b, "  %-8s %s\n", p.Name, p.Summary)
	}
	fmt.Fprintf(&b, "\nVerbs: %s\n", strings.Join(hooks.Verbs, ", "))
	fmt.Fprintf(&b, "Occurrences: 1st, 2nd, 3rd, ... or every (counted from when the hook is armed)\n")
	return b.String()
}

// commandText renders one scenario command in full: its usage, its notes,
// and its Detail (its Summary, when it has none), for racekit help
// scenario NAME.
func commandText(name string) (string, error) {
	var names []string
	for _, c := range harness.Commands(race.Commands()...) {
		if strings.HasPrefix(c.Name, "test-") {
			continue
		}
		names = append(names, c.Name)
		if c.Name != name {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s%s\n\n", c.Name, c.Args, notes(c))
		text := c.Summary
		if c.Detail != "" {
			text = c.Detail
		}
		b.WriteString(wrap(upper(text)+".", 76))
		return b.String(), nil
	}
	return "", fmt.Errorf("no scenario command %q%s", name, hint.DidYouMean(name, names))
}

// upper returns s with its first letter in upper case: a command's text
// begins in lower case, to follow its usage in a list, and reads as a
// sentence of its own when it stands alone.
func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// wrap breaks s into lines of at most width bytes at its spaces, ending
// each with a newline.
func wrap(s string, width int) string {
	var b strings.Builder
	line := 0
	for i, w := range strings.Fields(s) {
		switch {
		case i == 0:
		case line+1+len(w) > width:
			b.WriteString("\n")
			line = 0
		default:
			b.WriteString(" ")
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	b.WriteString("\n")
	return b.String()
}

// notes says whether a command takes "!" and may run as a hook action.
func notes(c *harness.Command) string {
	var n []string
	switch c.Negation {
	case harness.NegAPIError:
		n = append(n, `"!" expects the API server to refuse`)
	case harness.NegSelf:
		n = append(n, `takes "!"`)
	}
	if c.Hookable {
		n = append(n, "hook action")
	}
	if len(n) == 0 {
		return ""
	}
	return " [" + strings.Join(n, "; ") + "]"
}

// languageMarkdown renders the reference as docs/scenario-language.md.
func languageMarkdown() string {
	var b strings.Builder
	b.WriteString(languageIntro)
	group := ""
	for _, c := range harness.Commands(race.Commands()...) {
		if strings.HasPrefix(c.Name, "test-") {
			continue
		}
		if c.Group != group {
			group = c.Group
			fmt.Fprintf(&b, "\n### %s\n\n| command | what it does | `!` | in a hook |\n|---|---|---|---|\n", groupTitles[group])
		}
		neg := ""
		switch c.Negation {
		case harness.NegAPIError:
			neg = "expects a refusal"
		case harness.NegSelf:
			neg = "yes"
		}
		hook := ""
		if c.Hookable {
			hook = "yes"
		}
		summary := mdEscape(c.Summary)
		if c.Detail != "" {
			summary += fmt.Sprintf(" ([more](#%s))", c.Name)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", mdEscape(strings.TrimSpace(c.Name+" "+c.Args)), summary, neg, hook)
	}
	b.WriteString("\n## The commands in detail\n\nWhat the tables leave out: each command's forms, what it waits for and what it\npromises (`racekit help scenario NAME` shows one).\n")
	for _, c := range harness.Commands(race.Commands()...) {
		if strings.HasPrefix(c.Name, "test-") || c.Detail == "" {
			continue
		}
		fmt.Fprintf(&b, "\n### %s\n\n`%s`\n\n%s.\n", c.Name, strings.TrimSpace(c.Name+" "+c.Args), upper(c.Detail))
	}
	b.WriteString("\n## Hook points\n\n| point | when the action runs |\n|---|---|\n")
	for _, p := range hooks.Points() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", p.Name, mdEscape(p.Summary))
	}
	fmt.Fprintf(&b, "\nVerbs a trigger can name: %s, or `*` for any.\n", "`"+strings.Join(hooks.Verbs, "`, `")+"`")
	return b.String()
}

func mdEscape(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

const languageIntro = `# The scenario language

<!-- Generated by "racekit help scenario --markdown" from the commands' usage
data; TestLanguageDoc fails when this file is stale. Regenerate with
go test ./cmd/racekit -run TestLanguageDoc -update. -->

Scenarios are [testscript](https://pkg.go.dev/github.com/rogpeppe/go-internal/testscript)
files: one command per line, ` + "`#`" + ` comments, and the files the commands
read (` + "`-- webapp.yaml --`" + `) in the archive below the script. Start each
step with a ` + "`# phase`" + ` comment: on failure testscript shows the failing
phase in full. ` + "`racekit help scenario`" + ` prints this reference in the
terminal.

## The moving parts

- **Actors.** ` + "`setup`" + ` (the scenario's own ` + "`create`" + ` steps),
  ` + "`controller`" + ` (the controller a reconcile runs) and any writer you name
  (` + "`alice`, `bob`" + `). Each is its own user with its own client
  certificate, user agent (` + "`NAME/racekit`" + `) and so field manager
  (` + "`NAME`" + `).
- **Objects** are written ` + "`RESOURCE/NAME`" + `, such as ` + "`deployments/web`" + ` or
  ` + "`webapps/web/status`" + `. A controller's calls to a service outside the
  API server (Controller.SideEffects) are ` + "`RESOURCE/NAME`" + ` too.
- **Hooks.** ` + "`on POINT ACTOR VERB RESOURCE[/NAME] [Nth|every]: [!] COMMAND ARGS...`" + `
  arms a hook. The occurrence counts matching calls made after the hook is
  armed (` + "`#1`" + ` cannot be used: testscript reads ` + "`#`" + ` as a comment).
  Hooks fire in the order they were armed, synchronously, on the caller's
  goroutine, and are numbered from 1. A hook does not fire on the calls its
  own action makes. A hook that never fires fails the scenario, naming the
  line that armed it; an action that fails, panics or blocks past the hook
  timeout (30 s) fails it too.
- **"!"** before a writer command expects the API server to refuse the
  call; any other failure (a bad argument, a missing snapshot) still fails.
- **Snapshots.** ` + "`get ACTOR RESOURCE/NAME SNAP`" + ` keeps the object as read;
  ` + "`update ACTOR SNAP`" + ` sends it back with the resourceVersion it was read at.
- **Assertions** read the wire (` + "`conflicts`, `wire`" + `) or the server's
  current state (` + "`field`, `annotation`, `condition`" + `). Reads made for
  assertions are not recorded. The state usually comes from the trace
  itself: the API server's last answer about the object (to a GET, a
  create, an update or a patch), when nothing has touched the object since.
  Otherwise (after a 409, a delete or a dry run, say) the harness GETs the
  object.
- **Traces.** ` + "`trace`" + ` prints the normalized trace (resourceVersions and
  UIDs become rv1, uid1, ... in order of first appearance; in a hook's
  action, whose arguments arrive with ` + "`$VARS`" + ` expanded, a value the trace
  has already named shows as its symbol, and a list's or watch's as rv*);
  ` + "`cmp stdout trace.golden`" + ` compares it with the golden section, and
  ` + "`go test ./scenarios -update`" + ` rewrites that section.
- **Namespaces.** Each scenario runs in a namespace of its own, ` + "`$NAMESPACE`" + `,
  beside other scenarios on the same API server. Hooks, ` + "`await`" + ` and the
  assertions on the wire count the calls in it and those on cluster-scoped
  objects, never another scenario's object of the same name; the trace
  shows a call in another namespace with it (` + "`configmaps/c (namespace rk-...)`" + `).
  A controller that runs on its own has its reads of every namespace kept
  to the scenario's ([running.md](running.md)).

## Controllers and teaching variants

- **Controllers** are registered by name (racekit.Setup.Controllers; see
  "Race your own controller" in the README). ` + "`reconcile CONTROLLER RESOURCE/NAME`" + `
  runs one reconcile; the name may be left out when one controller
  reconciles RESOURCE, so racekit's catalogue writes ` + "`reconcile webapps/web`" + `
  for the reference controller, registered as ` + "`webapp`" + `. ` + "`settle`" + ` reconciles
  until the controller stops asking to run again, as a workqueue would;
  ` + "`result`" + ` asserts what the last reconcile returned.
- ` + "`reconcile ... as ACTOR`" + ` runs a second instance of the controller, built
  afresh as another actor, sharing the scenario's hooks and trace (and, for
  the reference controller, its registry); it can run inside a hook.
- **Cached controllers** read from informers whose LIST and WATCH are in the
  trace. Before each reconcile, after each hook action and after each of
  the controller's own writes, the harness waits until the cache holds
  every write so far, so a scenario reads the same on every run.
  ` + "`hold CONTROLLER RESOURCE`" + ` keeps the resource's watch events back, in order,
  until ` + "`release`" + `: in between, the controller reads stale state on purpose. A
  cached read makes no API call, so a hook on a cached controller's GET
  never fires: hook its writes, or hold its cache.
- The reference controller adds ` + "`registry-creates`" + `, ` + "`counted-conflicts`" + ` and
  ` + "`confirmed`" + `, and its registry calls, ` + "`registrations/NAME`" + `, are hooked and
  counted like API calls.
- ` + "`actor NAME user=USER groups=...`" + ` declares who an actor authenticates as,
  before its first call; scenarios rely on built-in RBAC grants only, since a
  Role created during a scenario takes effect only once the API server's RBAC
  cache catches up. ` + "`impersonate=true`" + ` lets a process spawned as NAME send
  Impersonate-* headers through the racing proxy, which refuses them
  otherwise; RBAC then decides.
- ` + "`racekit run --bug NAME`" + ` runs scenarios against a teaching variant of the
  reference controller that breaks one rule (` + "`racekit run --list-bugs`" + ` lists
  them); [variants.md](variants.md) shows which scenario catches which.
- A failed reconcile lists the "rule broken" it saw on the wire; ` + "`rereads`" + `,
  ` + "`attempts`" + ` and ` + "`confirmed`" + ` check the same rules directly. A reconcile that
  makes more than 20 calls of one kind on one object is stopped as an
  unbounded retry.

## Commands
`
