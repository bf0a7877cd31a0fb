package selfcheck

import (
	"strings"
	"testing"

	"github.com/racekit/racekit/harness/record"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
)

// TestAddNoise checks the noisy script CheckNoise runs: the noise's
// object, watches and reads first, a line of noise before each line of
// the script, none between a line and the check of what it printed, none
// after an explore line, a watch for each actor that makes calls but those
// the script declares, and each line's origin.
func TestAddNoise(t *testing.T) {
	const head = "apply noise racekit-noise.yaml\nwatch noise podtemplates racekit-noise-w\n"
	patch := func(n int) string {
		return `patch noise podtemplates/racekit-noise merge '{"metadata":{"annotations":{"racekit.dev/noise":"` + string(rune('0'+n)) + `"}}}'` + "\n"
	}
	const get = "get noise podtemplates/racekit-noise racekit-noise\n"
	const list = "list noise podtemplates racekit-noise-list\n"
	tests := []struct {
		name, script string
		want         string // the noisy script, without the noise's file
		origin       []int
		actors       []string
	}{
		{
			name:   "lines and actors",
			script: "# the flagship\ncreate webapp.yaml\non after controller get deployments/web 1st: annotate bob deployments/web team=blue\nreconcile webapps/web\nreferee alice\n",
			want: head + "watch setup podtemplates racekit-noise-w-setup\nwatch bob podtemplates racekit-noise-w-bob\nwatch controller podtemplates racekit-noise-w-controller\n" +
				"# the flagship\n" + patch(1) + "create webapp.yaml\n" + get + "on after controller get deployments/web 1st: annotate bob deployments/web team=blue\n" +
				list + "reconcile webapps/web\n" + patch(2) + "referee alice\n",
			origin: []int{0, 0, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5},
			actors: []string{"setup", "bob", "controller"},
		},
		{
			name:   "nothing between a line and what reads its output",
			script: "next w ADDED web\nstdout 'ADDED web'\n! stderr .\ntrace\ncmp stdout trace.golden\n",
			want:   head + patch(1) + "next w ADDED web\nstdout 'ADDED web'\n! stderr .\n" + get + "trace\ncmp stdout trace.golden\n",
			origin: []int{0, 0, 0, 1, 2, 3, 0, 4, 5},
		},
		{
			name:   "declared actors, reconcile as, spawn, try, repeat",
			script: "actor gc user=system:serviceaccount:kube-system:generic-garbage-collector\ndelete gc deployments/web\nreconcile webapps/web as controller-b\nspawn op -- ./op\ntry update carol snap\nrepeat 2 bump dave webapps/web\n",
			want: head + "watch controller-b podtemplates racekit-noise-w-controller-b\nwatch op podtemplates racekit-noise-w-op\nwatch carol podtemplates racekit-noise-w-carol\nwatch dave podtemplates racekit-noise-w-dave\n" +
				patch(1) + "actor gc user=system:serviceaccount:kube-system:generic-garbage-collector\n" + get + "delete gc deployments/web\n" + list + "reconcile webapps/web as controller-b\n" +
				patch(2) + "spawn op -- ./op\n" + get + "try update carol snap\n" + list + "repeat 2 bump dave webapps/web\n",
			origin: []int{0, 0, 0, 0, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6},
			actors: []string{"controller-b", "op", "carol", "dave"},
		},
		{
			name:   "no noise from the explore line on",
			script: "create webapp.yaml\nexplore reconcile webapps/web\nwith annotate bob deployments/web team=blue\nannotation deployments/web team=blue\n",
			want: head + "watch setup podtemplates racekit-noise-w-setup\nwatch controller podtemplates racekit-noise-w-controller\nwatch bob podtemplates racekit-noise-w-bob\n" +
				patch(1) + "create webapp.yaml\nexplore reconcile webapps/web\nwith annotate bob deployments/web team=blue\nannotation deployments/web team=blue\n",
			origin: []int{0, 0, 0, 0, 0, 0, 1, 2, 3, 4},
			actors: []string{"setup", "controller", "bob"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := addNoise([]byte(tc.script+"-- webapp.yaml --\nkind: WebApp\n"), commands, defaultNoise)
			assert.NilError(t, err)
			script, files, ok := strings.Cut(string(got.data), "-- webapp.yaml --\n")
			assert.Assert(t, ok, "the archive lost its file:\n%s", got.data)
			if diff := cmp.Diff(tc.want, script); diff != "" {
				t.Errorf("noisy script (-want +got):\n%s", diff)
			}
			assert.Assert(t, strings.HasPrefix(files, "kind: WebApp\n-- racekit-noise.yaml --\napiVersion: v1\nkind: PodTemplate\n"), "files:\n%s", files)
			assert.DeepEqual(t, got.origin, tc.origin)
			assert.DeepEqual(t, got.actors, tc.actors)
			for i, o := range tc.origin {
				assert.Equal(t, got.line(i+1), o)
			}
			assert.Equal(t, got.line(len(tc.origin)+1), 0)
		})
	}
}

// TestAddNoiseRefuses checks the scenarios the noise cannot be added to
// without changing them: one with an actor or a file of the noise's name.
func TestAddNoiseRefuses(t *testing.T) {
	tests := []struct{ name, script, want string }{
		{"the noise's actor", "bump noise webapps/web\n", "the scenario has an actor noise of its own"},
		{"the noise's actor, declared", "actor noise user=x\n", "the scenario has an actor noise of its own"},
		{"the noise's file", "create webapp.yaml\n-- racekit-noise.yaml --\nkind: X\n", "the scenario has a file racekit-noise.yaml of its own"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := addNoise([]byte(tc.script), commands, defaultNoise)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestNoiseWithout checks the trace a noisy run's trace command prints:
// without the noise actor's calls and anyone's on the noise's resource,
// the rest numbered from 1, hook firings kept.
func TestNoiseWithout(t *testing.T) {
	x := func(seq int, actor, verb, resource string) record.Entry {
		e := &record.Exchange{Seq: seq, Code: 200, Reason: "OK"}
		e.Actor, e.Verb, e.Resource, e.Name = actor, verb, resource, "web"
		return record.Entry{Exchange: e}
	}
	tr := record.Trace{
		x(1, "noise", "create", "podtemplates"),
		x(2, "alice", "watch", "podtemplates"),
		x(3, "setup", "create", "webapps"),
		{Hook: &record.HookFiring{ID: 1, Trigger: "after setup create webapps/web 1st", Action: "bump bob webapps/web"}},
		x(4, "noise", "get", "configmaps"),
		x(5, "bob", "patch", "webapps"),
	}
	got := defaultNoise.without(tr)
	assert.Equal(t, len(got), 3)
	assert.Equal(t, got[0].Exchange.Seq, 1)
	assert.Equal(t, got[0].Exchange.Actor, "setup")
	assert.Assert(t, got[1].Hook != nil)
	assert.Equal(t, got[2].Exchange.Seq, 2)
	assert.Equal(t, got[2].Exchange.Actor, "bob")
	assert.Equal(t, tr[2].Exchange.Seq, 3, "without changed the trace it was given")
}
