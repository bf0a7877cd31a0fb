// Package semantics holds the scenario commands that probe the API
// server's own semantics of optimistic concurrency: edit a snapshot before
// it is sent, update a status, apply, delete with preconditions, list with
// resourceVersion and continue, watch from a version, compact etcd, and
// the assertions on what each call was answered.
//
// It is an extension of the scenario language (Extension): it keeps its
// state (a scenario's open watches, its hold on old revisions) itself, and
// knows no controller.
package semantics

import "github.com/racekit/racekit/harness/language"

var compactCommands = []*language.Command{
	{
		Name: "compact", Args: "", Group: "race", MinArgs: 0, MaxArgs: 0,
		Summary: "compact etcd at its current revision, through the etcd client, once no other running scenario still reads an older revision; older resourceVersions are then gone for good",
		Run:     runCompact,
	},
}

// Extension returns the extension that adds the API-semantics commands.
func Extension() *language.Extension {
	var cmds []*language.Command
	for _, cs := range [][]*language.Command{snapshotCommands, collectionCommands, listCommands, watchCommands, compactCommands} {
		cmds = append(cmds, cs...)
	}
	return &language.Extension{Name: "api semantics", Commands: cmds}
}
