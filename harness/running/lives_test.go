package running

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/racekit/racekit/harness/language"
)

// TestLives checks where on the recorder's sequence Lives says each life
// of a name began and was gone: a life runs from the last call before its
// start, until the last call before a halt returned (its Run had
// returned) or before a crash; calls between are recorded in the life,
// and a life that runs has no end.
func TestLives(t *testing.T) {
	ctx := context.Background()
	sc := watcherScenario(t, "lives")
	defer sc.Close()
	defer haltAll(sc)
	bob, err := sc.Actor("bob")
	assert.NilError(t, err)
	kube, err := kubernetes.NewForConfig(bob.Config)
	assert.NilError(t, err)
	write := func(name string) {
		t.Helper()
		_, err := kube.CoreV1().ConfigMaps(sc.Namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		assert.NilError(t, err)
	}
	last := sc.Recorder().LastSeq
	inv := func(pos string) language.Invocation { return language.Invocation{Args: []string{"watcher"}, Pos: pos} }

	write("a")
	began := last()
	assert.NilError(t, runStart(sc, inv("x.txtar:1")))
	assert.DeepEqual(t, Lives(sc), []Life{{Name: "watcher", Actor: language.ControllerActor, From: began}})
	write("b")
	assert.NilError(t, runHalt(sc, inv("x.txtar:2")))
	halted := last()
	assert.Assert(t, halted > began)
	write("c")
	again := last()
	assert.NilError(t, runStart(sc, inv("x.txtar:3")))
	assert.NilError(t, runCrash(sc, inv("x.txtar:4")))
	crashed := last()
	write("d")
	assert.DeepEqual(t, Lives(sc), []Life{
		{Name: "watcher", Actor: language.ControllerActor, From: began, To: halted, Gone: true},
		{Name: "watcher", Actor: language.ControllerActor, From: again, To: crashed, Gone: true},
	})
}
