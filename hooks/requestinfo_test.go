package hooks_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"

	"github.com/racekit/racekit/hooks"
	"github.com/racekit/racekit/internal/requestforms"
)

// apiServerInfo is the RequestInfoFactory configured as kube-apiserver
// configures it (k8s.io/kubernetes/pkg/controlplane/apiserver's
// NewRequestInfoResolver): the prefixes api and apis, api without a group.
var apiServerInfo = &request.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}

// fromRequestInfo is the Call that ParseRequest must derive from a request
// whose RequestInfo is ri (err, if the factory refused it): the same
// verb, resource, namespace, name and subresource, but for the
// differences ParseRequest's doc names. The corpus sends no body, so a
// create names nothing in either.
func fromRequestInfo(actor string, req *http.Request, ri *request.RequestInfo, err error) hooks.Call {
	if err != nil || !ri.IsResourceRequest {
		// A refused /watch/ or /proxy/ prefix is a non-resource request.
		path := req.URL.Path
		if path == "" {
			path = "/"
		}
		return hooks.Call{Actor: actor, Verb: strings.ToLower(req.Method), Path: path}
	}
	c := hooks.Call{Actor: actor, Verb: ri.Verb, Resource: ri.Resource, Namespace: ri.Namespace, Name: ri.Name, Subresource: ri.Subresource}
	if c.Verb == "" {
		c.Verb = strings.ToLower(req.Method) // a method with no Kubernetes verb
	}
	if c.Resource == "namespaces" && c.Namespace == c.Name {
		c.Namespace = "" // a Namespace's own request
	}
	return c
}

// parseSpace is every form of request the corpus knows: the resources of
// each kind of path (the core group, a group, a custom resource,
// cluster-scoped ones, a Namespace itself), each namespace form, objects
// with subresources (a name that is also a namespace's included), every
// verb prefix, method, query and Accept header, and every malformation.
var parseSpace = requestforms.Space{
	Resources: []requestforms.Resource{
		{Version: "v1", Resource: "configmaps"},
		{Group: "apps", Version: "v1", Resource: "deployments"},
		{Group: "demo.racekit.dev", Version: "v1alpha1", Resource: "webapps"},
		{Version: "v1", Resource: "namespaces"},
		{Version: "v1", Resource: "pods"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	},
	NamespaceForms: requestforms.NamespaceForms([]string{"mine", "theirs"}),
	Names:          []string{"c", "mine"},
	Subresources:   []string{"status", "finalize", "log", "status/extra"},
	PathVerbs:      requestforms.PathVerbs,
	Methods:        requestforms.Methods,
	Queries:        requestforms.Queries,
	Accepts:        requestforms.Accepts,
	Malformed:      true,
	Seed:           28,
}

// TestParseRequestAgreesWithAPIServer is the property that ParseRequest
// reads a request as kube-apiserver does: for every request of the corpus
// (requestforms: every client's forms, and malformed ones), the Call is
// the one the API server's own RequestInfoFactory gives, but for the
// differences ParseRequest's doc names (fromRequestInfo). It needs no
// control plane: the factory is the API server's code.
func TestParseRequestAgreesWithAPIServer(t *testing.T) {
	// The factory logs each query it cannot decode (limit=x).
	klog.SetLogger(logr.Discard())
	corpus := requestforms.Corpus(parseSpace)
	failed := 0
	for _, r := range corpus {
		req, err := http.NewRequest(r.Method, "https://apiserver"+r.URI(), nil)
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		if r.Accept != "" {
			req.Header.Set("Accept", r.Accept)
		}
		ri, riErr := apiServerInfo.NewRequestInfo(req)
		want := fromRequestInfo("a", req, ri, riErr)
		if diff := cmp.Diff(want, hooks.ParseRequest("a", req)); diff != "" {
			if failed++; failed <= 20 {
				t.Errorf("%s: ParseRequest does not read it as the API server does (-server +ParseRequest):\n%s", r, diff)
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d requests read otherwise than the API server reads them", failed, len(corpus))
	}
	t.Logf("%d requests", len(corpus))
}
