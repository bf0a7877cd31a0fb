package auto

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// TestNeedsGenerated checks, over generated scenarios and candidates, the
// shrinker's verdict without a run (needs.missing): it names a line only
// when a model of the candidate's run fails there, and the first such
// line whenever the model fails for want of a create. A scenario is a sequence that passes
// whole: creates of archive files (one or two namespaced objects each,
// each file once, or again once its objects were deleted), named writes
// (patch, scale, annotate, delete) of objects that exist by then, and
// other lines (waits, spawns); some
// objects are also made by a controller (needs.others), which the model
// takes as always there; some are made by a command needs does not read
// (make), of which it can say nothing. A candidate leaves out a random
// subset of its lines; the model runs what is left in a new namespace: a
// write of an object no kept line made, and no controller makes, fails;
// after a delete of it, the model says nothing (a finalizer may keep it).
func TestNeedsGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 58))
	var flagged, clean int
	for n := range 4000 {
		nobj := 2 + r.IntN(4)
		objs := make([]string, nobj)
		for i := range objs {
			objs[i] = fmt.Sprintf("%s/o%d", []string{"configmaps", "rabbitmqclusters", "services"}[r.IntN(3)], i)
		}
		// Files: each object in one file, some files with two.
		nd := &needs{made: map[string][]string{}, others: map[string]bool{}}
		var files []string
		for i := 0; i < nobj; {
			f := fmt.Sprintf("f%d.yaml", len(files))
			k := min(1+r.IntN(2), nobj-i)
			nd.made[f] = slices.Clone(objs[i : i+k])
			files = append(files, f)
			i += k
		}
		for _, o := range objs {
			if r.IntN(5) == 0 {
				nd.others[o] = true
			}
		}
		// Objects a command needs does not read makes (a custom
		// command's, as storageclass), in no file.
		opaque := []string{"secrets/p0", "secrets/p1"}
		objs = append(objs, opaque...)
		unopaque := slices.Clone(opaque)
		// The scenario: it passes whole.
		exists := map[string]bool{}
		deleted := map[string]bool{}
		for o := range nd.others {
			exists[o] = true
		}
		var script []string
		unmade := slices.Clone(files)
		for range 4 + r.IntN(10) {
			switch k := r.IntN(4); {
			case k == 0 && len(unopaque) > 0 && r.IntN(3) == 0:
				o := unopaque[0]
				unopaque = unopaque[1:]
				script = append(script, "make "+o)
				exists[o] = true
			case k == 0 && len(unmade) > 0:
				f := unmade[0]
				unmade = unmade[1:]
				script = append(script, "create "+f)
				for _, o := range nd.made[f] {
					exists[o] = true
				}
			case k == 0:
				// A file made again once its objects were deleted (the
				// recreate workload's create of the cluster).
				for _, f := range files {
					if !slices.ContainsFunc(nd.made[f], func(o string) bool { return !deleted[o] || nd.others[o] }) {
						script = append(script, "create "+f)
						for _, o := range nd.made[f] {
							deleted[o] = false
						}
						break
					}
				}
			case k == 1:
				var can []string
				for _, o := range objs {
					if exists[o] && !deleted[o] {
						can = append(can, o)
					}
				}
				if len(can) == 0 {
					continue
				}
				o := can[r.IntN(len(can))]
				verb := []string{"patch", "scale", "annotate", "delete"}[r.IntN(4)]
				script = append(script, fmt.Sprintf("%s alice %s x", verb, o))
				if verb == "delete" {
					deleted[o] = true
				}
			default:
				script = append(script, []string{"await op create statefulsets/s 201", "idle op", "spawn op -- op", "! delete alice configmaps/none"}[r.IntN(4)])
			}
		}
		// A candidate, and the model's run of it.
		var kept, gone []string
		for _, l := range script {
			if r.IntN(3) == 0 {
				gone = append(gone, l)
			} else {
				kept = append(kept, l)
			}
		}
		have := map[string]bool{}
		for o := range nd.others {
			have[o] = true
		}
		// fails is the first line the model's run fails at for want of an
		// object a create makes; the run may fail earlier, at an
		// object of make's.
		// An object deleted in the candidate's run may be there still
		// (a finalizer): needs says nothing of it after that.
		fails := ""
		gonce := map[string]bool{}
		for _, l := range kept {
			f := strings.Fields(l)
			switch {
			case f[0] == "create":
				for _, o := range nd.made[f[1]] {
					have[o] = true
				}
			case f[0] == "make":
				have[f[1]] = true
			case namedWriters[f[0]] && !have[f[2]] && !slices.Contains(opaque, f[2]) && !gonce[f[2]] && fails == "":
				fails = l
			}
			if f[0] == "delete" {
				have[f[2]], gonce[f[2]] = nd.others[f[2]], true
			}
		}
		got := nd.missing(kept, gone)
		assert.Equal(t, got, fails, "case %d: scenario %q, kept %q", n, script, kept)
		if got != "" {
			flagged++
		} else {
			clean++
		}
	}
	assert.Assert(t, flagged > 300 && clean > 300, "flagged %d, clean %d", flagged, clean)
}
