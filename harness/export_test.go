package harness

import (
	"context"
	"testing"
)

// reference builds the options that race racekit's reference controller,
// as the teaching variant bug ("" for the production controller), and
// returns its CRDs; reference_test.go sets it.
var reference func(bug string) (ScriptOptions, []CRD, error)

// SetReference is for reference_test.go.
func SetReference(f func(bug string) (ScriptOptions, []CRD, error)) { reference = f }

// refOptions returns options that race the reference controller (the
// teaching variant bug, or the production one) on cp, whose CRD it
// installs.
func refOptions(tb testing.TB, c *ControlPlane, bug string) ScriptOptions {
	tb.Helper()
	opts, crds, err := reference(bug)
	if err != nil {
		tb.Fatal(err)
	}
	if err := c.InstallCRDs(context.Background(), crds); err != nil {
		tb.Fatal(err)
	}
	// The commands that misbehave on purpose, and the crash test's.
	opts.Commands = append(append(opts.Commands, faultCommands...), crashCommands...)
	return opts
}

// withRef returns options that race the reference controller on the
// shared control plane, with files.
func withRef(tb testing.TB, files ...string) (*ControlPlane, ScriptOptions) {
	tb.Helper()
	c := controlPlane(tb)
	opts := refOptions(tb, c, "")
	opts.Files = files
	return c, opts
}
