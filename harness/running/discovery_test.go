package running

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/racekit/racekit/harness/controlplane"
	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/internal/assets"
)

// testCRD is a namespaced CRD of plural.group that keeps any field.
func testCRD(plural, group, kind string) *apiextensionsv1.CustomResourceDefinition {
	yes := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind, ListKind: kind + "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &yes}}}},
		},
	}
}

// TestControllerManagerDiscovery runs kube-controller-manager's garbage
// collector beside two CRDs: one the test process installed (InstallCRDs,
// what racekit.Setup's CRDs are), and one another client made on the
// same API server, as another test package sharing it would. The
// collector caches every kind its discovery shows, so it must watch the
// first and never the second; the trace keeps the API server's own
// discovery answers.
func TestControllerManagerDiscovery(t *testing.T) {
	if _, err := assets.FindControllerManager(); err != nil {
		t.Fatalf("this test races kube-controller-manager: %v", err)
	}
	ctx := context.Background()
	cp := controlPlane(t)
	own := testCRD("keptthings", "kept.racekit.dev", "KeptThing")
	assert.NilError(t, cp.InstallCRDs(ctx, []controlplane.CRD{{Source: "discovery_test.go", Object: own}}))

	other := testCRD("strangers", "elsewhere.racekit.dev", "Stranger")
	client, err := dynamic.NewForConfig(cp.Admin())
	assert.NilError(t, err)
	crds := client.Resource(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"))
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(other)
	assert.NilError(t, err)
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	// Bounded: a CRD is Established in well under a second.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	w, err := crds.Watch(wctx, metav1.ListOptions{FieldSelector: "metadata.name=" + other.Name})
	assert.NilError(t, err)
	defer w.Stop()
	if _, err := crds.Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), other.Name, metav1.DeleteOptions{}) })
	established(t, w)

	file := filepath.Join(t.TempDir(), "kcm_discovery.txtar")
	assert.NilError(t, os.WriteFile(file, []byte(`controller-manager controllers=garbagecollector
create parent.yaml child.yaml
adopt setup configmaps/d-child configmaps/d-parent
delete setup configmaps/d-parent propagation=Background
await kcm delete configmaps/d-child 200
-- parent.yaml --
apiVersion: v1
kind: ConfigMap
metadata:
  name: d-parent
-- child.yaml --
apiVersion: v1
kind: ConfigMap
metadata:
  name: d-child
`), 0o644))
	results := language.RunFiles(ctx, cp, kcmLanguage(file))
	assert.Equal(t, len(results), 1)
	res := results[0]
	assert.Assert(t, res.Passed, "%s", res.Log)
	watched := map[string]bool{}
	for _, x := range res.Trace.Exchanges() {
		if x.Actor == KCMActor && x.Verb == "watch" {
			watched[x.Resource] = true
		}
	}
	// The collector had synced every monitor before it deleted the child.
	assert.Assert(t, watched["keptthings"], "the garbage collector never watched the process's own CRD; it watched %v", watched)
	assert.Assert(t, !watched["strangers"], "the garbage collector watched another client's CRD")
	assert.Assert(t, watched["configmaps"], "%v", watched)
}

// established waits on w, a watch of one CRD, until it is Established.
func established(t *testing.T, w watch.Interface) {
	t.Helper()
	for ev := range w.ResultChan() {
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		var crd apiextensionsv1.CustomResourceDefinition
		assert.NilError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd))
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return
			}
		}
	}
	t.Fatal("the CRD's watch ended before it was Established")
}

// TestDiscoveryKeep checks the rewrite of discovery answers: another
// client's CRD leaves /apis when its group holds none of the scenario's,
// and /apis/GROUP/VERSION with its subresources; the scenario's own and
// the built-in groups stay; what is not the legacy form goes as it came.
func TestDiscoveryKeep(t *testing.T) {
	names := []string{"strangers.elsewhere.dev", "mine.shared.dev", "theirs.shared.dev"}
	hidden := hide(names, map[string]bool{"mine.shared.dev": true})
	groups := `{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}},{"name":"elsewhere.dev","versions":[{"groupVersion":"elsewhere.dev/v1","version":"v1"}],"preferredVersion":{"groupVersion":"elsewhere.dev/v1","version":"v1"}},{"name":"shared.dev","versions":[{"groupVersion":"shared.dev/v1","version":"v1"}],"preferredVersion":{"groupVersion":"shared.dev/v1","version":"v1"}}]}`
	resources := `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"shared.dev/v1","resources":[{"name":"mine","singularName":"","namespaced":true,"kind":"Mine","verbs":["get"]},{"name":"theirs","singularName":"","namespaced":true,"kind":"Theirs","verbs":["get"]},{"name":"theirs/status","singularName":"","namespaced":true,"kind":"Theirs","verbs":["get"]}]}`
	cases := []struct {
		name, group, body string
		ok                bool
		want, wantNot     []string
	}{
		{"groups", "", groups, true, []string{`"name":"apps"`, `"name":"shared.dev"`}, []string{"elsewhere.dev"}},
		{"resources", "shared.dev", resources, true, []string{`"name":"mine"`}, []string{`"theirs`}},
		{"another group's resources", "apps", strings.Replace(resources, "shared.dev/v1", "apps/v1", 1), true, []string{`"name":"theirs"`, `"name":"theirs/status"`}, nil},
		{"aggregated", "", `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[]}`, false, nil, nil},
		{"not JSON", "", "\x0a\x0bk8s", false, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, ok := keep([]byte(c.body), c.group, hidden)
			assert.Equal(t, ok, c.ok)
			for _, w := range c.want {
				assert.Assert(t, strings.Contains(string(out), w), "want %s in %s", w, out)
			}
			for _, w := range c.wantNot {
				assert.Assert(t, !strings.Contains(string(out), w), "want no %s in %s", w, out)
			}
		})
	}
	for path, want := range map[string]bool{"/apis": true, "/apis/": true, "/apis/apps/v1": true, "/apis/apps": false, "/api": false, "/api/v1": false, "/apis/apps/v1/deployments": false, "/apis//v1": false} {
		req, err := http.NewRequest(http.MethodGet, "https://x"+path, nil)
		assert.NilError(t, err)
		_, got := apisPath(req)
		assert.Equal(t, got, want, path)
	}
}
