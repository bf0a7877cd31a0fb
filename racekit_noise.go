package racekit

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/racekit/racekit/harness"
)

// CheckNoise tests the verdicts of s's scenarios against noise that
// cannot matter: it runs every scenario in s.Dir, as Play does, once as it
// is and once with another actor writing, watching and reading an object
// of a resource no one uses, each of the scenario's actors watching that
// resource too, and every object's state read from the API server. Every
// assertion's verdict, the rules each failure names and every failure that
// stops a scenario must be the same in both runs, and so must an explore
// line's runs; a check with Differences says which verdict changed. A
// project that registers its own assertions (Setup.Commands) or rules
// (Controller.Check) learns that they read only what they should. The
// noise is PodTemplates, which a controller that watches or writes them
// would see. Like Run, it needs Main.
func CheckNoise(s Setup) ([]NoiseCheck, error) {
	opts, err := s.options()
	if err != nil {
		return nil, err
	}
	c, err := controlPlane(s)
	if err != nil {
		return nil, err
	}
	if err := install(c, s); err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(opts.Dir, "*.txtar"))
	if err != nil {
		return nil, err
	}
	opts.Dir, opts.UpdateScripts, opts.Done = "", false, nil
	// The scenarios run a few at a time, each in a namespace of its own,
	// as go test runs them.
	checks := make([]NoiseCheck, len(files))
	errs := make([]error, len(files))
	slots := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			nc, err := harness.CheckNoise(context.Background(), c, opts, f)
			if err != nil {
				errs[i] = err
				return
			}
			checks[i] = *nc
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return checks, nil
}
