package harness_test

import (
	"github.com/racekit/racekit/controller/race"
	"github.com/racekit/racekit/controller/teaching"
	"github.com/racekit/racekit/harness"
)

// The harness knows no controller, but many of its tests race one: the
// reference controller, plugged in here through racekit's public API, as a
// project plugs in its own. Only an external test package may import it
// (it imports the harness), so it hands it to the package's own tests.
func init() {
	harness.SetReference(func(bug string) (harness.ScriptOptions, []harness.CRD, error) {
		var v teaching.Variant
		if bug != "" {
			var err error
			if v, err = teaching.Lookup(bug); err != nil {
				return harness.ScriptOptions{}, nil, err
			}
		}
		s := race.Setup("", race.Options{Bug: v})
		crds, err := s.ReadCRDs()
		if err != nil {
			return harness.ScriptOptions{}, nil, err
		}
		opts, err := s.ScriptOptions()
		return opts, crds, err
	})
}
