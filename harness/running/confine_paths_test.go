package running

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/internal/requestforms"
)

// probeLabel marks the objects TestConfinedPaths makes, and limits its
// deletes of a collection (dry runs all) to them.
const probeLabel = "racekit.dev/probe"

// confinedSpace is the corpus TestConfinedPaths sends: ConfigMaps, a
// group's Deployments and the cluster-scoped Namespaces, in every
// namespace form, as a collection, one object and its status, with and
// without the deprecated watch prefix; every method; a query of each kind
// the API server tells apart (a list, a watch, of one name or not: which
// spelling of a watch each client sends is TestParseRequestAgreesWithAPIServer's
// to check, since no path the confinement rewrites depends on it); the
// Accept headers it can read as JSON (a list, a table, metadata only); and
// each path malformed in a few ways the generator picks.
func confinedSpace(mine, theirs string) requestforms.Space {
	var queries []requestforms.Form
	for _, q := range requestforms.Queries {
		switch q.Name {
		case "no query", "client-go list", "client-go reflector watch", "client-go watch-list",
			"the Python client's watch", "kubectl get NAME --watch", "kubectl get with a field selector of a name", "watch false":
			queries = append(queries, q)
		}
	}
	return requestforms.Space{
		Resources: []requestforms.Resource{
			{Version: "v1", Resource: "configmaps"},
			{Group: "apps", Version: "v1", Resource: "deployments"},
			{Version: "v1", Resource: "namespaces"},
		},
		NamespaceForms:  requestforms.NamespaceForms([]string{mine, theirs}),
		Names:           []string{"c"},
		Subresources:    []string{"status"},
		PathVerbs:       []string{"", "watch"},
		Methods:         []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete},
		Queries:         queries,
		Accepts:         []requestforms.Form{requestforms.AcceptJSON, requestforms.AcceptTable, requestforms.AcceptMetadataList, requestforms.AcceptMetadataOnly, requestforms.AcceptAny, requestforms.AcceptNone},
		Malformed:       true,
		MalformedSample: 4,
		Seed:            28,
	}
}

// everyNamespaceSpace is the corpus of the reads that the confinement is
// about, sent in full: a GET of the namespaced resources of confinedSpace
// in every namespace, in an empty namespace and in the scenario's, as a
// collection and as one object, with and without the watch prefix, each
// malformed in every way requestforms knows (a leading double slash, . and
// .., an encoded character, upper case, an emptied or dropped segment),
// with the query and Accept header the generator picks.
func everyNamespaceSpace(mine string) requestforms.Space {
	s := confinedSpace(mine, "")
	s.Resources = s.Resources[:2]
	s.NamespaceForms = requestforms.NamespaceForms([]string{mine})[:3]
	s.Subresources = nil
	s.Methods = []string{http.MethodGet}
	s.Queries = s.Queries[:1]
	s.MalformedSample = 0
	return s
}

// corpus returns the requests of spaces, each once.
func corpus(spaces ...requestforms.Space) []requestforms.Request {
	seen := map[string]bool{}
	var out []requestforms.Request
	for _, s := range spaces {
		for _, r := range requestforms.Corpus(s) {
			key := r.Method + " " + r.URI() + " " + r.Accept
			if !seen[key] {
				seen[key] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// apiServerInfo is the RequestInfoFactory configured as kube-apiserver
// configures it: what the API server makes of a request's path.
var apiServerInfo = &request.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}

// namespacedProbe says which of confinedSpace's resources are namespaced,
// by the exact name the API server serves.
var namespacedProbe = map[string]bool{"configmaps": true, "deployments": true}

// route is one way a request reaches the API server: straight (the
// harness's admin, unrecorded), or as an actor, recorded.
type route struct {
	name     string
	client   *http.Client
	host     string
	recorded bool
	confined bool
}

// TestConfinedPaths is the property that the confinement keeps every
// read of every namespace to the scenario's, and changes nothing else, on
// a real API server: each request of a generated corpus (confinedSpace
// and everyNamespaceSpace: every client's forms and malformed ones) is
// sent straight to
// kube-apiserver and through each way an actor reaches it, with objects
// of the same names in the scenario's namespace and in another. For each:
//
//   - no confined actor is shown an object of another namespace than the
//     scenario's, unless the request named that namespace itself;
//   - what a confined actor gets is what the API server answers straight,
//     restricted to the scenario's namespace when the API server reads the
//     request (its own RequestInfo) as one of every namespace, and
//     unchanged otherwise: the same status, the same shape, the same
//     objects;
//   - the call each actor's recorder notes matches what the API server
//     did: the code it answered, a list or a watch where it sent one, and
//     the namespace and name of every object it sent.
//
// The confined actors are a spawned process's (through the racing proxy)
// and a started controller's (its transport); an actor that is not
// confined checks the recorded call against every-namespace answers too.
func TestConfinedPaths(t *testing.T) {
	cp := controlPlane(t)
	ctx := context.Background()
	sc, err := language.NewScenario(ctx, cp, "confined-paths", t.TempDir())
	assert.NilError(t, err)
	defer sc.Close()
	kube, err := kubernetes.NewForConfig(cp.Admin())
	assert.NilError(t, err)
	ns, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rk-theirs-"}}, metav1.CreateOptions{})
	assert.NilError(t, err)
	t.Cleanup(func() { _ = kube.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) })
	mine, theirs := sc.Namespace, ns.Name
	made := makeProbes(t, kube, map[string][]string{mine: {"c", "d"}, theirs: {"c", "e"}})

	routes := confinedRoutes(t, sc)
	corpus := corpus(confinedSpace(mine, theirs), everyNamespaceSpace(mine))
	start := time.Now()
	failed := map[string]map[string]bool{} // property, route: requests
	for _, r := range corpus {
		for _, f := range checkConfined(t, sc, routes, mine, r) {
			key := f.property + ", " + f.route
			if failed[key] == nil {
				failed[key] = map[string]bool{}
			}
			if failed[key][r.String()] = true; len(failed[key]) <= 5 {
				t.Errorf("%s: %s: %s", r, f.route, f.message)
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(failed)) {
		t.Errorf("%s: %d of %d requests", key, len(failed[key]), len(corpus))
	}
	t.Logf("%d requests, each by %d routes, in %s", len(corpus), len(routes), time.Since(start).Round(time.Millisecond))
	// Every write was a dry run: what the test made is as it was.
	assert.DeepEqual(t, listProbes(t, kube, []string{mine, theirs}), made)
}

// makeProbes makes a ConfigMap of each name in each namespace, and a
// Deployment c in each, and returns what listProbes will find.
func makeProbes(t *testing.T, kube kubernetes.Interface, names map[string][]string) []string {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{probeLabel: "paths"}
	var namespaces []string
	for ns, cms := range names {
		namespaces = append(namespaces, ns)
		for _, n := range cms {
			_, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: labels}}, metav1.CreateOptions{})
			assert.NilError(t, err)
		}
		pod := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/c"}}}}
		_, err := kube.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: labels},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: pod}}, metav1.CreateOptions{})
		assert.NilError(t, err)
	}
	return listProbes(t, kube, namespaces)
}

// listProbes returns kind/namespace/name@resourceVersion of each object
// makeProbes made in namespaces, sorted.
func listProbes(t *testing.T, kube kubernetes.Interface, namespaces []string) []string {
	t.Helper()
	ctx := context.Background()
	sel := metav1.ListOptions{LabelSelector: probeLabel + "=paths"}
	var out []string
	for _, ns := range namespaces {
		cms, err := kube.CoreV1().ConfigMaps(ns).List(ctx, sel)
		assert.NilError(t, err)
		for _, o := range cms.Items {
			out = append(out, "ConfigMap/"+o.Namespace+"/"+o.Name+"@"+o.ResourceVersion)
		}
		ds, err := kube.AppsV1().Deployments(ns).List(ctx, sel)
		assert.NilError(t, err)
		for _, o := range ds.Items {
			out = append(out, "Deployment/"+o.Namespace+"/"+o.Name+"@"+o.ResourceVersion)
		}
	}
	slices.Sort(out)
	return out
}

// confinedRoutes returns the routes a request takes: straight, through
// the racing proxy as a spawned process's actor, through a started
// controller's confined transport, and as an actor that is not confined.
func confinedRoutes(t *testing.T, sc *language.Scenario) []route {
	t.Helper()
	client := func(cfg *rest.Config) *http.Client {
		hc, err := rest.HTTPClientFor(cfg)
		assert.NilError(t, err)
		return hc
	}
	admin := sc.ControlPlane().Admin()
	kubeconfig := filepath.Join(t.TempDir(), "spawned")
	assert.NilError(t, WriteKubeconfig(sc, "spawned", kubeconfig))
	proxied, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	assert.NilError(t, err)
	started, err := sc.Actor("started")
	assert.NilError(t, err)
	plain, err := sc.Actor("plain")
	assert.NilError(t, err)
	return []route{
		{name: "straight", client: client(admin), host: admin.Host},
		{name: "through the racing proxy", client: client(proxied), host: proxied.Host, recorded: true, confined: true},
		{name: "through a started controller's transport", client: client(confined(sc, started.Config)), host: started.Config.Host, recorded: true, confined: true},
		{name: "as an actor that is not confined", client: client(plain.Config), host: plain.Config.Host, recorded: true},
	}
}

// finding is one break of a property TestConfinedPaths states, by a route.
type finding struct {
	property, route, message string
}

// checkConfined sends r by each route and returns what breaks the
// properties TestConfinedPaths states.
func checkConfined(t *testing.T, sc *language.Scenario, routes []route, mine string, r requestforms.Request) []finding {
	t.Helper()
	r = asProbe(r)
	probe, err := http.NewRequest(r.Method, "https://apiserver"+r.URI(), nil)
	assert.NilError(t, err)
	info, infoErr := apiServerInfo.NewRequestInfo(probe)
	if infoErr == nil && info.Verb == "watch" {
		// The API server ends the initial events of a watch with a
		// bookmark: the evidence that the watch has shown what exists. It
		// sends them only to a watch=true in the query, the deprecated
		// watch path's too (a watch=false before it still wins).
		r.Query += "&watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
	}
	every := infoErr == nil && info.IsResourceRequest && info.Namespace == "" && namespacedProbe[info.Resource]
	named := infoErr == nil && info.Namespace != "" && info.Namespace != mine

	var straight answer
	var out []finding
	for i, rt := range routes {
		before := sc.Recorder().LastSeq()
		a, err := send(rt, r)
		if err != nil {
			out = append(out, finding{"no answer", rt.name, err.Error()})
			continue
		}
		if i == 0 {
			straight = a
			continue
		}
		if rt.confined {
			want := straight
			if every {
				want = straight.in(mine)
			}
			if !named {
				for _, o := range a.Objects {
					if o.Namespace != "" && o.Namespace != mine {
						out = append(out, finding{"shown another namespace", rt.name, fmt.Sprintf("shown %s of namespace %s, not the scenario's", o.Name, o.Namespace)})
					}
				}
			}
			if d := want.diff(a); d != "" {
				out = append(out, finding{"answered otherwise", rt.name, fmt.Sprintf("answered otherwise than the API server (every namespace: %t): %s", every, d)})
			}
		}
		if rt.recorded {
			var xs []record.Exchange
			sc.Recorder().Scan(func(x *record.Exchange) {
				if x.Seq > before {
					xs = append(xs, *x)
				}
			})
			if len(xs) != 1 {
				out = append(out, finding{"recorded otherwise", rt.name, fmt.Sprintf("%d calls recorded, want 1", len(xs))})
				continue
			}
			if msg := a.matches(&xs[0]); msg != "" {
				out = append(out, finding{"recorded otherwise", rt.name, fmt.Sprintf("recorded %s (namespace %q) %d, but %s", xs[0].Call, xs[0].Namespace, xs[0].Code, msg)})
			}
		}
	}
	return out
}

// asProbe makes r safe to send to a shared API server: every write is a
// dry run, a delete of a collection only of what the test made, and a
// write carries a body the API server can read.
func asProbe(r requestforms.Request) requestforms.Request {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		q := "dryRun=All"
		if r.Method == http.MethodDelete {
			q += "&labelSelector=" + probeLabel + "%3Dpaths"
		}
		if r.Query != "" {
			q = r.Query + "&" + q
		}
		r.Query = q
	}
	return r
}

// body returns what a request of method carries, and its content type.
func body(method string) (io.Reader, string) {
	switch method {
	case http.MethodPost, http.MethodPut:
		return strings.NewReader(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"` + probeLabel + `":"paths"}}}`), "application/json"
	case http.MethodPatch:
		return strings.NewReader(`{"metadata":{"annotations":{"` + probeLabel + `":"patched"}}}`), "application/merge-patch+json"
	}
	return nil, ""
}

// guard bounds one request: a test that reaches it has failed, since a
// watch ends its initial events with a bookmark.
const guard = 20 * time.Second

// send sends r by rt and reads its answer: the whole body, or a watch's
// initial events up to the bookmark that ends them.
func send(rt route, r requestforms.Request) (answer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	b, contentType := body(r.Method)
	req, err := http.NewRequestWithContext(ctx, r.Method, strings.TrimSuffix(rt.host, "/")+r.URI(), b)
	if err != nil {
		return answer{}, err
	}
	if r.Accept != "" {
		req.Header.Set("Accept", r.Accept)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := rt.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	a, err := readAnswer(resp)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return a, fmt.Errorf("no answer, or no bookmark after a watch's initial events, within %s", guard)
	}
	return a, err
}
