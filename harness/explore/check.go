package explore

import "github.com/racekit/racekit/harness/language"

// Check reports what is wrong with the explore scenario in file
// before anything runs, as Explore would report it: a file that cannot be
// read, no explore line, a bad depth=N, an unknown workload or interferer,
// each naming file:line. opts gives the commands the scenario may name.
func Check(opts language.Options, file string) error {
	cmds, err := language.Table(opts.Extensions, opts.Commands)
	if err != nil {
		return err
	}
	_, err = parseExploration(file, cmds)
	return err
}
