package running

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
)

// kube-controller-manager's garbage collector and namespace controller
// cache every kind the API server's discovery lists, and on an API server
// that other test processes or packages share, that is their CRDs too: a
// list and a watch of each, and the collector acting on their objects'
// owner references. So what controller-manager runs discovers the API
// server's built-in groups and the scenario's CRDs alone: those the test
// process installed (racekit.Setup's CRDs, WithCRDs, InstallCRDs) and
// those the scenario created itself. Any other CRD is left out of its
// discovery answers: its group from /apis, its resource from
// /apis/GROUP/VERSION.
//
// The trace keeps the API server's own answers: the view is outermost in
// the actor's transport, so the recorder (and a hook) sees the request as
// sent and the answer as the API server gave it, and the actor is shown
// the answer with the other CRDs taken out. A discovery request's Accept
// asks for the legacy forms (APIGroupList, APIResourceList) rather than
// the aggregated one, which client-go accepts from any API server, and
// its Accept-Encoding none, so that the answer can be read and rewritten.

// keepDiscovery keeps actor's discovery to sc's CRDs from its first call:
// before the spawn that adds the actor to the racing proxy.
func keepDiscovery(sc *language.Scenario, actor string) {
	st := stateOf(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.discovery[actor] = true
}

// keptDiscovery reports whether actor's discovery is kept to sc's CRDs.
func keptDiscovery(sc *language.Scenario, actor string) bool {
	st := stateOf(sc)
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.discovery[actor]
}

// ownDiscovery returns next with the discovery answers it carries kept to
// sc's CRDs when actor's discovery is (keepDiscovery), and next itself
// otherwise.
func ownDiscovery(sc *language.Scenario, actor string, next http.RoundTripper) (http.RoundTripper, error) {
	if !keptDiscovery(sc, actor) {
		return next, nil
	}
	client, err := metadata.NewForConfig(sc.ControlPlane().Admin())
	if err != nil {
		return nil, fmt.Errorf("the discovery of %s: %w", actor, err)
	}
	return discoveryView{next: next, hidden: func(ctx context.Context) (hiddenCRDs, error) {
		return otherCRDs(ctx, client, sc)
	}}, nil
}

// hiddenCRDs are the CRDs on the API server a discovery view leaves out,
// by group and resource, and the groups all of whose CRDs it leaves out.
type hiddenCRDs struct {
	resources map[[2]string]bool // {group, plural}
	groups    map[string]bool
}

// otherCRDs returns the CRDs on the API server that are not sc's: neither
// installed by the test process nor created in sc's trace. It reads their
// names alone (a CRD is named PLURAL.GROUP), with a metadata list: a
// CRD's schema can be a megabyte, and every discovery read of
// kube-controller-manager's (about twenty a round, a round at its start
// and every 30 s) asks for this list again.
func otherCRDs(ctx context.Context, client metadata.Interface, sc *language.Scenario) (hiddenCRDs, error) {
	list, err := client.Resource(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")).List(ctx, metav1.ListOptions{})
	if err != nil {
		return hiddenCRDs{}, fmt.Errorf("list the CRDs: %w", err)
	}
	own := sc.ControlPlane().InstalledCRDs()
	sc.Recorder().Scan(func(x *record.Exchange) {
		if x.Verb == "create" && x.Resource == "customresourcedefinitions" && x.Code == http.StatusCreated {
			own[x.Name] = true
		}
	})
	names := make([]string, 0, len(list.Items))
	for _, m := range list.Items {
		names = append(names, m.Name)
	}
	return hide(names, own), nil
}

// hide returns which of the CRDs named names (PLURAL.GROUP) a view leaves
// out, given the names of the scenario's own: every other one, and each
// group none of whose CRDs is the scenario's.
func hide(names []string, own map[string]bool) hiddenCRDs {
	h := hiddenCRDs{resources: map[[2]string]bool{}, groups: map[string]bool{}}
	shown := map[string]bool{}
	for _, n := range names {
		plural, group, ok := strings.Cut(n, ".")
		if !ok {
			continue // the API server names every CRD PLURAL.GROUP
		}
		if own[n] {
			shown[group] = true
			continue
		}
		h.resources[[2]string{group, plural}] = true
		h.groups[group] = true
	}
	for g := range shown {
		delete(h.groups, g)
	}
	return h
}

// discoveryView keeps the discovery answers it carries to what hidden
// does not leave out.
type discoveryView struct {
	next   http.RoundTripper
	hidden func(ctx context.Context) (hiddenCRDs, error)
}

// legacyDiscovery is the Accept of a discovery request through a view:
// the legacy forms, which the view can rewrite.
const legacyDiscovery = "application/json"

func (v discoveryView) RoundTrip(req *http.Request) (*http.Response, error) {
	group, ok := apisPath(req)
	if !ok {
		return v.next.RoundTrip(req)
	}
	// A RoundTripper must not change the request it was given.
	req = req.Clone(req.Context())
	req.Header.Set("Accept", legacyDiscovery)
	req.Header.Del("Accept-Encoding")
	resp, err := v.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read the discovery answer of %s: %w", req.URL.Path, err)
	}
	hidden, err := v.hidden(req.Context())
	if err != nil {
		return nil, err
	}
	if out, ok := keep(body, group, hidden); ok {
		body = out
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header = resp.Header.Clone()
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.Header.Del("Content-Encoding")
	return resp, nil
}

// apisPath reports whether req reads the discovery of /apis, with group
// "", or of /apis/GROUP/VERSION, with its group.
func apisPath(req *http.Request) (group string, ok bool) {
	if req.Method != http.MethodGet {
		return "", false
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) == 1 && parts[0] == "apis":
		return "", true
	case len(parts) == 3 && parts[0] == "apis" && parts[1] != "" && parts[2] != "":
		return parts[1], true
	}
	return "", false
}

// keep returns body, the API server's answer to a discovery read of group
// ("" for /apis), without what hidden leaves out, and false when body is
// not the legacy form it reads (the answer then goes as it came).
func keep(body []byte, group string, hidden hiddenCRDs) ([]byte, bool) {
	if group == "" {
		var list metav1.APIGroupList
		if err := json.Unmarshal(body, &list); err != nil || list.Kind != "APIGroupList" {
			return nil, false
		}
		kept := list.Groups[:0]
		for _, g := range list.Groups {
			if !hidden.groups[g.Name] {
				kept = append(kept, g)
			}
		}
		list.Groups = kept
		out, err := json.Marshal(list)
		return out, err == nil
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil || list.Kind != "APIResourceList" {
		return nil, false
	}
	kept := list.APIResources[:0]
	for _, r := range list.APIResources {
		plural, _, _ := strings.Cut(r.Name, "/") // a subresource goes with its resource
		if !hidden.resources[[2]string{group, plural}] {
			kept = append(kept, r)
		}
	}
	list.APIResources = kept
	out, err := json.Marshal(list)
	return out, err == nil
}
