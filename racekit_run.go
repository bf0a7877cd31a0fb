package racekit

import (
	"context"
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// RunFunc is a controller's long-running form, as its main runs it: it
// builds its clients from cfg, watches namespace only (a scenario's
// namespace; other scenarios run beside it), and returns when ctx is done.
// A client-go controller's Run(ctx, workers) after its informers, or
// anything else that takes a rest.Config.
type RunFunc func(ctx context.Context, cfg *rest.Config, namespace string) error

// Runner registers a controller that scenarios run on its own (start NAME,
// then await what it must do, and halt NAME) rather than reconcile one
// step at a time: every call it makes passes through racekit's hooks and
// recorder, and a hook holds the call that fired it until its action is
// done, so the race is staged at the same moment on every run although the
// controller runs on goroutines of its own. forObj is the kind it
// reconciles, for help.
func Runner(name string, scheme *runtime.Scheme, forObj client.Object, run RunFunc, opts ...Option) *Controller {
	c := &Controller{Name: name, Scheme: scheme, For: forObj}
	Runs(run)(c)
	for _, o := range opts {
		o(c)
	}
	return c
}

// Runs gives a controller that Reconciler or ClientGo registers a running
// form too, so that scenarios may both reconcile it step by step and start
// it on its own.
func Runs(run RunFunc) Option {
	return func(c *Controller) {
		c.Run = func(ctx context.Context, in *Instance) error {
			if run == nil {
				return fmt.Errorf("controller %s: Runs was given no function", c.Name)
			}
			return run(ctx, in.Config, in.Namespace)
		}
	}
}

// Manages gives a controller a running form as a controller-runtime
// manager: setup adds the controller to mgr, as a kubebuilder project's
// SetupWithManager does. racekit builds the manager on the actor's config
// with the controller's scheme, its cache limited to the scenario's
// namespace, without metrics, health probes or leader election, and runs
// it until the scenario halts it.
func Manages(setup func(mgr manager.Manager) error) Option {
	return func(c *Controller) {
		c.Run = func(ctx context.Context, in *Instance) error {
			mgr, err := manager.New(in.Config, manager.Options{
				Scheme: c.Scheme,
				Cache:  cache.Options{DefaultNamespaces: map[string]cache.Config{in.Namespace: {}}},
				// The API server's resources, as the harness already
				// knows them: a mapper of the manager's own would
				// discover them again, and its calls would fill the
				// trace.
				MapperProvider: func(*rest.Config, *http.Client) (meta.RESTMapper, error) {
					return in.Scenario().Mapper(), nil
				},
				Metrics:                metricsserver.Options{BindAddress: "0"},
				HealthProbeBindAddress: "0",
				// Every scenario builds the same controller again in
				// one process; names need only be unique within one
				// manager.
				Controller: config.Controller{SkipNameValidation: ptr.To(true)},
				Logger:     logr.Discard(),
			})
			if err != nil {
				return fmt.Errorf("controller %s: manager: %w", c.Name, err)
			}
			if err := setup(mgr); err != nil {
				return fmt.Errorf("controller %s: setup: %w", c.Name, err)
			}
			return mgr.Start(ctx)
		}
	}
}
