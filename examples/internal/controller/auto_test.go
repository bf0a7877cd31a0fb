package controller_test

import (
	"testing"

	"github.com/racekit/racekit"
)

// TestAuto explores testdata/auto with explore auto: the fixed reconciler
// in a manager of its own, with no hint. It has no finding.
func TestAuto(t *testing.T) {
	results, err := racekit.Play(racekit.Setup{
		Dir:         "testdata/auto",
		CRDs:        []string{"../../config/crd/bases"},
		Controllers: []*racekit.Controller{memcached("memcached", true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Explored == nil || r.Explored.Auto == nil {
			t.Fatalf("%s explored nothing auto:\n%s", r.Name, r.Log)
		}
		t.Log(r.Explored.Table())
	}
	racekit.Expect(t, results, map[string]racekit.Want{"memcached_scale": racekit.Passes()})
}
