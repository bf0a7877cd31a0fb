package selfcheck

import (
	"github.com/racekit/racekit/harness/controllers"
	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/running"
	"github.com/racekit/racekit/harness/semantics"
	"github.com/racekit/racekit/harness/views"
)

// commands is every command a scenario of the harness may use, by name, for
// the transforms that read scripts.
var commands = func() map[string]*language.Command {
	cmds, err := language.Table([]*language.Extension{semantics.Extension(), controllers.Extension(nil, nil), views.Extension(nil), running.Extension(), explore.Extension(explore.Settings{})}, nil)
	if err != nil {
		panic(err)
	}
	return cmds
}()
