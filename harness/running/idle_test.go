package running

import (
	"context"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/hooks"
)

// TestIdleCountsHeldCalls checks that a call a before-hook holds is in
// flight for idle: the recorder, inside the hooks, has not seen it yet,
// but the controller is busy all the same. While the hook's action blocks,
// idle must run out of time, naming the held call, however long the quiet
// period (at most maxQuiet, below within); once the action is done and the
// update has gone through, idle returns.
func TestIdleCountsHeldCalls(t *testing.T) {
	ctx := context.Background()
	sc := watcherScenario(t, "idle-held")
	defer sc.Close()

	bob, err := sc.Actor("bob")
	assert.NilError(t, err)
	kube, err := kubernetes.NewForConfig(bob.Config)
	assert.NilError(t, err)
	cms := kube.CoreV1().ConfigMaps(sc.Namespace)
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"value": "1"}}, metav1.CreateOptions{})
	assert.NilError(t, err)

	before, ok := hooks.LookupPoint("before")
	assert.Assert(t, ok)
	entered, gate := make(chan struct{}), make(chan struct{})
	sc.Arm(hooks.Hook{
		Point: before, Match: hooks.Matcher{Actor: language.ControllerActor, Verb: "update", Resource: "configmaps", Name: "c"}, Occurrence: 1, Label: "wait for the gate",
		Action: func(hooks.Event) error {
			close(entered)
			<-gate
			return nil
		},
	}, "idle_test")
	opened := false
	open := func() {
		if !opened {
			opened = true
			close(gate)
		}
	}
	defer haltAll(sc)
	defer open()

	assert.NilError(t, runStart(sc, language.Invocation{Args: []string{"watcher"}}))
	select {
	case <-entered:
	case <-time.After(DefaultWait):
		t.Fatalf("the watcher never sent its update:\n%s", sc.Trace().Tail(15))
	}
	within := maxQuiet + time.Second
	err = runIdle(sc, language.Invocation{Args: []string{"watcher", "within=" + within.String()}})
	assert.ErrorIs(t, err, errWaited, "idle passed while a hook held the watcher's update")
	assert.Assert(t, strings.Contains(err.Error(), "in flight now, hooks and all: update configmaps/c"), "%v", err)

	open()
	assert.NilError(t, runIdle(sc, language.Invocation{Args: []string{"watcher"}}))
	cm, err := cms.Get(ctx, "c", metav1.GetOptions{})
	assert.NilError(t, err)
	assert.Equal(t, cm.Data["seen"], "1")
	assert.DeepEqual(t, haltAll(sc), []string(nil))
}
