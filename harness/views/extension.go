package views

import "github.com/racekit/racekit/harness/language"

// Names returns the actor that what a layer above runs under name runs as
// now (package running's start and spawn: its last life's actor), and
// whether anything runs under name: hold NAME and release NAME act on that
// actor's view.
type Names func(sc *language.Scenario, name string) (actor string, ok bool)

var stateKey = language.NewKey("views", func(*language.Scenario) *views { return newViews() })

// viewsOf returns the views of sc.
func viewsOf(sc *language.Scenario) *views { return stateKey.Of(sc) }

// Extension returns the extension of what each actor is shown: hold,
// release and mark, at the wire of every actor's transport (Transport),
// and, at the scenario's end, a failure for each hold that failed or that
// nothing met. names says what runs under a name; nil when nothing does.
func Extension(names Names) *language.Extension {
	if names == nil {
		names = func(*language.Scenario, string) (string, bool) { return "", false }
	}
	return &language.Extension{
		Name:      "views",
		Commands:  commands(names),
		Transport: transport,
		End:       func(sc *language.Scenario) ([]string, []language.Failure) { return nil, viewFailures(sc) },
	}
}

// Held returns the resources whose watches a hold keeps back from actor:
// what it is not shown on purpose, which no wait for it to catch up waits
// for.
func Held(sc *language.Scenario, actor string) map[string]bool {
	v := viewsOf(sc)
	v.mu.Lock()
	defer v.mu.Unlock()
	out := map[string]bool{}
	for k := range v.holds {
		if k.actor == actor {
			out[k.resource] = true
		}
	}
	return out
}
