package harness

// Commands that misbehave on purpose, registered only in this package's
// tests, for the scripts under testdata/faults: the harness must turn each
// misbehaviour into a failed scenario, never a crash or a hang.
var faultCommands = []*Command{
	{
		Name: "test-panic", Group: "setup", MinArgs: 0, MaxArgs: 0, Hookable: true,
		Summary: "panic, as a buggy command would (tests only)",
		Run:     func(*Scenario, Invocation) error { panic("test-panic was called") },
	},
	{
		Name: "test-block", Group: "setup", MinArgs: 0, MaxArgs: 0, Hookable: true,
		Summary: "block forever, as a stuck hook action would (tests only)",
		Run: func(sc *Scenario, _ Invocation) error {
			<-make(chan struct{})
			return nil
		},
	},
}
