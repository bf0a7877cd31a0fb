package running

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"
	corev1 "k8s.io/api/core/v1"
	kscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/racekit/racekit/harness/controllers"
	"github.com/racekit/racekit/harness/internal/testcp"
	"github.com/racekit/racekit/harness/internal/testctrl"
	"github.com/racekit/racekit/harness/language"
)

func TestMain(m *testing.M) { testcp.Main(m) }

var controlPlane = testcp.ControlPlane

// watcherScenario returns a scenario named name on this package's control
// plane, with the controller watcher (testctrl.WatchConfigMaps) registered:
// for the tests that drive the running commands from Go.
func watcherScenario(t *testing.T, name string) *language.Scenario {
	t.Helper()
	sc, err := language.NewScenario(context.Background(), controlPlane(t), name, t.TempDir())
	assert.NilError(t, err)
	watcher := &controllers.Controller{Name: "watcher", Scheme: kscheme.Scheme, For: &corev1.ConfigMap{},
		Run: func(ctx context.Context, in *controllers.Instance) error {
			return testctrl.WatchConfigMaps(ctx, in.Config, in.Namespace)
		}}
	assert.NilError(t, controllers.Extension(map[string]*controllers.Controller{"watcher": watcher}, nil).Setup(sc, nil))
	return sc
}
