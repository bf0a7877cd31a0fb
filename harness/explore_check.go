package harness

// CheckExplore reports what is wrong with the explore scenario in file
// before anything runs, as Explore would report it: a file that cannot be
// read, no explore line, a bad depth=N, an unknown workload or interferer,
// each naming file:line. opts gives the commands the scenario may name.
func CheckExplore(opts ScriptOptions, file string) error {
	_, cmds, err := opts.registry()
	if err != nil {
		return err
	}
	_, err = parseExploration(file, cmds)
	return err
}
