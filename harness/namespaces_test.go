package harness

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	kscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/racekit/racekit/harness/internal/testctrl"
)

// namespaceControllers are the controllers of testdata/namespaces:
// watcher-all, the watcher of every namespace, in process.
func namespaceControllers() []*Controller {
	return []*Controller{
		{Name: "watcher-all", Scheme: kscheme.Scheme, For: &corev1.ConfigMap{}, Run: func(ctx context.Context, in *Instance) error {
			return testctrl.WatchConfigMaps(ctx, in.Config, metav1.NamespaceAll)
		}},
	}
}

// decoy is a ConfigMap c in a namespace of its own, which no scenario
// owns: what a controller that watches every namespace would find and
// update, if nothing kept it to its scenario's.
type decoy struct {
	kube      kubernetes.Interface
	namespace string
}

func newDecoy(t *testing.T, cp *ControlPlane) decoy {
	t.Helper()
	kube, err := kubernetes.NewForConfig(cp.Admin())
	assert.NilError(t, err)
	ctx := context.Background()
	ns, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rk-decoy-"}}, metav1.CreateOptions{})
	assert.NilError(t, err)
	_, err = kube.CoreV1().ConfigMaps(ns.Name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"value": "1"}}, metav1.CreateOptions{})
	assert.NilError(t, err)
	return decoy{kube: kube, namespace: ns.Name}
}

// untouched fails t unless the decoy is as it was made: no controller
// saw it.
func (d decoy) untouched(t *testing.T) {
	t.Helper()
	cm, err := d.kube.CoreV1().ConfigMaps(d.namespace).Get(context.Background(), "c", metav1.GetOptions{})
	assert.NilError(t, err)
	assert.DeepEqual(t, cm.Data, map[string]string{"value": "1"})
	assert.Equal(t, len(cm.Annotations), 0, "annotations %v", cm.Annotations)
}

// TestNamespacesConfined runs two scenarios at once whose controllers
// list and watch ConfigMaps in every namespace, one spawned through the
// racing proxy and one started in process, each with a ConfigMap c of
// its own, beside a c in a namespace no scenario owns. Each must see its
// own c alone: its assertions hold, its trace names no other namespace,
// and the other c is untouched. Without the confinement the watchers
// update every c they see, and both the traces and the decoy show it.
func TestNamespacesConfined(t *testing.T) {
	cp := controlPlane(t)
	d := newDecoy(t, cp)
	files := []string{"testdata/namespaces/spawned_every_namespace.txtar", "testdata/namespaces/started_every_namespace.txtar"}
	results := make([][]Result, len(files))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = RunFiles(context.Background(), cp, ScriptOptions{Files: []string{f}, Controllers: append(runningControllers(), namespaceControllers()...)})
		}()
	}
	wg.Wait()
	for i, res := range results {
		assert.Equal(t, len(res), 1)
		assert.Assert(t, res[0].Passed, "%s failed:\n%s", files[i], res[0].Log)
		for _, x := range res[0].Trace.Exchanges() {
			assert.Assert(t, !x.Foreign, "%s: #%d %s went to namespace %s", files[i], x.Seq, x.Call, x.Namespace)
		}
	}
	d.untouched(t)
}

// TestNamespacesForeignCalls runs testdata/namespaces/foreign_calls.txtar,
// whose controller updates a ConfigMap in a namespace the test made
// (test-meddle) before its own: hooks, assertions and the referee must
// pass over that call, and the trace must name its namespace.
func TestNamespacesForeignCalls(t *testing.T) {
	cp := controlPlane(t)
	d := newDecoy(t, cp)
	configmaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	meddle := &Command{
		Name: "test-meddle", Args: "ACTOR", Group: "write", MinArgs: 1, MaxArgs: 1,
		Summary: "update, as ACTOR, the ConfigMap c of the test's decoy namespace, with the resourceVersion it has",
		Run: func(sc *Scenario, inv Invocation) error {
			a, err := sc.Actor(inv.Args[0])
			if err != nil {
				return err
			}
			cms := a.Dynamic.Resource(configmaps).Namespace(d.namespace)
			admin, err := d.kube.CoreV1().ConfigMaps(d.namespace).Get(sc.Context(), "c", metav1.GetOptions{})
			if err != nil {
				return err
			}
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "c", "resourceVersion": admin.ResourceVersion},
				"data":     map[string]any{"value": "1", "seen": "meddled"},
			}}
			_, err = cms.Update(sc.Context(), u, metav1.UpdateOptions{})
			return err
		},
	}
	res := RunFiles(context.Background(), cp, ScriptOptions{Files: []string{"testdata/namespaces/foreign_calls.txtar"}, Commands: []*Command{meddle}})
	assert.Equal(t, len(res), 1)
	assert.Assert(t, res[0].Passed, "the script failed:\n%s", res[0].Log)
	var foreign []string
	for _, x := range res[0].Trace.Exchanges() {
		if x.Foreign {
			foreign = append(foreign, fmt.Sprintf("%s in %s", x.Call, x.Namespace))
		}
	}
	assert.DeepEqual(t, foreign, []string{"controller update configmaps/c in " + d.namespace})
	js, err := JSON(res[0].Trace.Rows())
	assert.NilError(t, err)
	assert.Equal(t, strings.Count(js, `"otherNamespace": "`+d.namespace+`"`), 1, "%s", js)
	assert.Equal(t, strings.Count(Timeline(res[0].Trace.Rows(), false), "(namespace "+d.namespace+")"), 1)
}
