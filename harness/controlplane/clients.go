package controlplane

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/racekit/racekit/internal/hint"
)

// User returns a config that authenticates as the user name in groups,
// creating a client certificate the first time a name is asked for.
func (cp *ControlPlane) User(name string, groups ...string) (*rest.Config, error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cfg, ok := cp.users[name]; ok {
		return rest.CopyConfig(cfg), nil
	}
	u, err := cp.env.AddUser(envtest.User{Name: name, Groups: groups}, baseConfig())
	if err != nil {
		return nil, fmt.Errorf("add user %s: %w", name, err)
	}
	cfg := u.Config()
	cp.users[name] = cfg
	return rest.CopyConfig(cfg), nil
}

// Mapper returns the REST mapper built at start, which knows the built-in
// resources and the installed CRDs.
func (cp *ControlPlane) Mapper() meta.RESTMapper { return cp.mapper }

func newMapper(cfg *rest.Config) (meta.RESTMapper, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		return nil, fmt.Errorf("discover API resources: %w", err)
	}
	return restmapper.NewDiscoveryRESTMapper(groups), nil
}

// Resource resolves a resource name as scenarios write it ("deployments",
// "deployment", "webapps") to its GroupVersionResource and scope.
func (cp *ControlPlane) Resource(name string) (schema.GroupVersionResource, bool, error) {
	gvr, err := cp.mapper.ResourceFor(schema.GroupVersionResource{Resource: name})
	if err != nil {
		return gvr, false, fmt.Errorf("unknown resource %q%s", name, hint.DidYouMean(name, cp.ResourceNames()))
	}
	gvk, err := cp.mapper.KindFor(gvr)
	if err != nil {
		return gvr, false, fmt.Errorf("kind of %s: %w", gvr, err)
	}
	m, err := cp.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return gvr, false, fmt.Errorf("mapping of %s: %w", gvk, err)
	}
	return gvr, m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// ResourceNames lists the plural resource names the mapper knows, for hints.
func (cp *ControlPlane) ResourceNames() []string {
	var names []string
	cp.crdMu.Lock()
	var crds []string
	for _, c := range cp.crds {
		crds = append(crds, c.Object.Spec.Names.Plural)
	}
	cp.crdMu.Unlock()
	sort.Strings(crds)
	for _, r := range append(crds, "deployments", "configmaps", "secrets", "pods", "services", "replicasets", "namespaces", "serviceaccounts") {
		if _, err := cp.mapper.ResourceFor(schema.GroupVersionResource{Resource: r}); err == nil {
			names = append(names, r)
		}
	}
	return names
}

// DeclaredUser returns a config that authenticates as user in groups, with
// a client certificate of its own. Unlike User it does not cache by name:
// the same user name may come with other groups in another scenario.
func (cp *ControlPlane) DeclaredUser(user string, groups []string) (*rest.Config, error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	u, err := cp.env.AddUser(envtest.User{Name: user, Groups: groups}, baseConfig())
	if err != nil {
		return nil, fmt.Errorf("add user %s: %w", user, err)
	}
	return u.Config(), nil
}

// Admin returns the harness's own superuser config: unrecorded, for the
// harness's setup and for assertions, never for a scenario's actors.
func (cp *ControlPlane) Admin() *rest.Config { return rest.CopyConfig(cp.admin) }
