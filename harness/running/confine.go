package running

import (
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/proxy"
)

// What runs on its own keeps to its scenario: most operators list and
// watch every namespace, and other scenarios run beside this one on the
// same API server. So each actor's LIST and WATCH of a namespaced resource
// across every namespace is sent as one of the scenario's namespace, in
// the racing proxy for a spawned process and in the transport of a
// started controller; the hooks and the recorder see the request as
// rewritten. The racing proxy also refuses impersonation, unless the
// scenario declared it, and connection upgrades, and records each
// refusal as the actor's call.

// confinement is the confinement of sc's actors that run on their own to
// sc's namespace, which the control plane's REST mapper (CRDs and all)
// says a resource is served in or not.
func confinement(sc *language.Scenario) proxy.Confinement {
	mapper := sc.Mapper()
	return proxy.Confinement{Namespace: sc.Namespace, Namespaced: func(r schema.GroupVersionResource) bool {
		return namespaced(mapper, r)
	}}
}

// namespaced reports whether mapper knows r as a namespaced resource.
func namespaced(mapper meta.RESTMapper, r schema.GroupVersionResource) bool {
	kind, err := mapper.KindFor(r)
	if err != nil {
		return false
	}
	m, err := mapper.RESTMapping(kind.GroupKind(), kind.Version)
	return err == nil && m.Scope.Name() == meta.RESTScopeNameNamespace
}

// confined returns cfg with its reads of every namespace kept to sc's, and
// its reads of nodes to sc's nodes (nodes.go), for
// a controller started in this process, which does not go through the
// racing proxy: outermost, so that its hooks and recorder see the
// rewritten request, as a spawned process's do.
func confined(sc *language.Scenario, cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(confinement(sc).Wrap)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return ownNodes(sc, next) })
	return cfg
}

// impersonation is the racing proxy's Options.Impersonation: an actor
// declared with impersonate=true may send impersonation headers, which the
// API server then judges by the actor's RBAC; any other is refused.
func impersonation(sc *language.Scenario) func(actor string) error {
	return func(actor string) error {
		if sc.MayImpersonate(actor) {
			return nil
		}
		return fmt.Errorf("the scenario has not declared that %s may impersonate: declare it, before its first call, with actor %s impersonate=true (RBAC then decides: with groups=system:masters it may)", actor, actor)
	}
}

// refusals is the racing proxy's Options.Refusals: a refused request is
// recorded as its actor's call, with the proxy's answer.
func refusals(sc *language.Scenario) func(actor string) func(http.RoundTripper) http.RoundTripper {
	return sc.Recorder().Wrap
}
