package running

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"gotest.tools/v3/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/racekit/racekit/harness/language"
)

// TestRestartStale checks what restart ... stale asks of the holds at the
// wire (HoldAt, which tests replace): a hold for each stale resource, for
// the name's actor, as of at= or, without it, of the revision at the
// crash; each taken once the old life is crashed and before the new one
// starts. A hold that fails leaves the name crashed, not started again.
func TestRestartStale(t *testing.T) {
	ctx := context.Background()
	sc := watcherScenario(t, "restart-stale")
	defer sc.Close()
	defer haltAll(sc)

	var holds []string
	var fail error
	hold := holdAt
	defer func() { holdAt = hold }()
	holdAt = func(sc *language.Scenario, actor, resource, rv, pos string) error {
		r, _ := lifelineOf(sc, "watcher")
		l := lastLife(sc, r)
		holds = append(holds, fmt.Sprintf("%s %s at=%s (%s), life %d crashed at %s", actor, resource, rv, pos, l.n, l.crash.at()))
		return fail
	}
	restart := func(args ...string) error {
		return runRestart(sc, language.Invocation{Args: append([]string{"watcher"}, args...), Pos: "x.txtar:9"})
	}

	assert.NilError(t, runStart(sc, language.Invocation{Args: []string{"watcher"}, Pos: "x.txtar:1"}))
	admin, err := kubernetes.NewForConfig(sc.ControlPlane().Admin())
	assert.NilError(t, err)
	_, err = admin.CoreV1().ConfigMaps(sc.Namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	assert.NilError(t, err)

	assert.NilError(t, restart("stale", "configmaps", "deployments"))
	list, err := admin.CoreV1().ConfigMaps(sc.Namespace).List(ctx, metav1.ListOptions{})
	assert.NilError(t, err)
	now := list.ResourceVersion
	assert.DeepEqual(t, holds, []string{
		"controller configmaps at=" + now + " (x.txtar:9), life 1 crashed at x.txtar:9",
		"controller deployments at=" + now + " (x.txtar:9), life 1 crashed at x.txtar:9",
	})
	r, _ := lifelineOf(sc, "watcher")
	assert.Equal(t, lastLife(sc, r).n, 2)

	holds = nil
	assert.NilError(t, restart("stale", "configmaps", "at=7"))
	assert.DeepEqual(t, holds, []string{"controller configmaps at=7 (x.txtar:9), life 2 crashed at x.txtar:9"})

	fail = errors.New("resourceVersion 7 is compacted")
	err = restart("stale", "configmaps", "at=7")
	assert.ErrorContains(t, err, "watcher was crashed, but not started again: hold controller configmaps at=7: resourceVersion 7 is compacted")
	l := lastLife(sc, r)
	assert.Equal(t, l.n, 3)
	assert.Equal(t, l.crash.at(), "x.txtar:9")
	// The name stays crashed, and a restart of a crashed name starts it
	// again without a second crash.
	assert.NilError(t, restart())
	l = lastLife(sc, r)
	assert.Equal(t, l.n, 4)
	assert.Equal(t, l.crash.at(), "")
}

// TestParseRestart checks restart's arguments after the name.
func TestParseRestart(t *testing.T) {
	tests := []struct {
		args  []string
		stale []string
		at    string
		err   string
	}{
		{nil, nil, "", ""},
		{[]string{"stale", "configmaps"}, []string{"configmaps"}, "", ""},
		{[]string{"stale", "configmaps", "deployments", "at=12"}, []string{"configmaps", "deployments"}, "12", ""},
		{[]string{"stale", "configmaps", "at=mark-a"}, []string{"configmaps"}, "mark-a", ""},
		{[]string{"at=12"}, nil, "", "at=12 without stale"},
		{[]string{"stale"}, nil, "", "stale names no resource"},
		{[]string{"stale", "at=12"}, nil, "", "stale names no resource"},
		{[]string{"stale", "configmaps", "at="}, nil, "", "at= names no revision"},
		{[]string{"stale", "configmaps/c"}, nil, "", `bad stale resource "configmaps/c"`},
		{[]string{"stale", "at=1", "configmaps"}, nil, "", `bad stale resource "at=1"`},
		{[]string{"fresh", "configmaps"}, nil, "", `unexpected "fresh configmaps"`},
	}
	for _, tc := range tests {
		stale, at, err := parseRestart(tc.args)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%q", tc.args)
			_, usage := errors.AsType[*language.Usage](err)
			assert.Assert(t, usage, "%v is no usage error", err)
			continue
		}
		assert.NilError(t, err, "%q", tc.args)
		assert.DeepEqual(t, stale, tc.stale)
		assert.Equal(t, at, tc.at)
	}
}
