// Package race plugs racekit's reference controller into racekit through
// the public API, exactly as a project plugs in its own: the WebApp
// controller, its CRD, the external registry it registers with, its own
// assertions and the rules its state must keep. The controller package
// itself knows nothing of racekit.
package race

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/controller"
	"github.com/racekit/racekit/controller/api/v1alpha1"
	"github.com/racekit/racekit/controller/registry"
	"github.com/racekit/racekit/controller/teaching"
)

// Name is the reference controller's name in scenarios: reconcile webapp
// webapps/web, or reconcile webapps/web, since it is the one controller
// that reconciles webapps.
const Name = "webapp"

// Options configures the reference controller as scenarios run it.
type Options struct {
	// Bug is the teaching variant every instance runs instead of the
	// production controller; the zero Variant is the production one.
	Bug teaching.Variant
}

// Setup returns what racekit.Run needs to race the reference controller
// with the scenarios in dir.
func Setup(dir string, opts Options) racekit.Setup {
	crds, err := fs.Sub(controller.CRDs, "config/crd")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder
	}
	return racekit.Setup{Dir: dir, CRDFS: crds, Controllers: Controllers(opts), Commands: Commands()}
}

// scheme is built once: it registers every built-in type, which costs each
// scenario about 2 ms of CPU, and a scheme is safe for concurrent use.
var scheme = sync.OnceValue(controller.NewScheme)

// Controllers returns the reference controller, registered under Name.
func Controllers(opts Options) []*racekit.Controller {
	return []*racekit.Controller{{
		Name:        Name,
		Summary:     "racekit's reference controller: a WebApp becomes a Deployment and a record in an external registry",
		Scheme:      scheme(),
		For:         &v1alpha1.WebApp{},
		SideEffects: []string{registry.Resource},
		Check:       check,
		New: func(in *racekit.Instance) (reconcile.Reconciler, error) {
			srv, err := registryOf(in.Scenario())
			if err != nil {
				return nil, err
			}
			o := controller.Options{
				Backoff:  racekit.ZeroDelayRetry(),
				Registry: registry.NewClient(srv.url, in.HTTPClient("registry")),
				Metrics:  controller.NewMetrics(),
			}
			r := controller.New(in.Client, o)
			if !opts.Bug.IsZero() {
				r = controller.NewTeachingVariant(in.Client, o, opts.Bug)
			}
			return &reconciler{r: r, metrics: o.Metrics}, nil
		},
		// Its running form is its production main's: informers that
		// wake a rate-limited workqueue, one worker, and every call
		// through racekit's hooks and recorder.
		Run: func(ctx context.Context, in *racekit.Instance) error {
			srv, err := registryOf(in.Scenario())
			if err != nil {
				return err
			}
			o := controller.Options{
				Backoff:  racekit.ZeroDelayRetry(),
				Registry: registry.NewClient(srv.url, in.HTTPClient("registry")),
				Metrics:  controller.NewMetrics(),
			}
			ro := controller.RunOptions{Options: o, Namespace: in.Namespace, Workers: 1}
			if !opts.Bug.IsZero() {
				return controller.RunTeachingVariant(ctx, in.Config, ro, opts.Bug)
			}
			return controller.Run(ctx, in.Config, ro)
		},
	}}
}

// reconciler adapts the reference controller, whose Reconcile takes a key
// and returns an error, to controller-runtime's Reconciler; it keeps the
// conflict counter counted-conflicts reads.
type reconciler struct {
	r       *controller.Reconciler
	metrics *controller.Metrics
}

func (a *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return reconcile.Result{}, a.r.Reconcile(ctx, req.NamespacedName)
}

// registryServer is a scenario's own registry, on loopback, so that its
// record IDs and create count belong to that scenario alone; every
// instance of the scenario shares it, as replicas share one registry.
type registryServer struct {
	*registry.Server
	url string
}

// registryOf returns sc's registry, started on first use.
func registryOf(sc *racekit.Scenario) (*registryServer, error) {
	v, err := sc.Shared("racekit.dev/registry", func() (any, error) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("registry listener: %w", err)
		}
		srv := &registryServer{Server: registry.NewServer(), url: "http://" + l.Addr().String()}
		hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
		go hs.Serve(l)
		sc.Defer(func() { hs.Close() })
		return srv, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*registryServer), nil
}

// webApp decodes obj.
func webApp(obj runtime.Unstructured) (*v1alpha1.WebApp, error) {
	var app v1alpha1.WebApp
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.UnstructuredContent(), &app); err != nil {
		return nil, err
	}
	return &app, nil
}
