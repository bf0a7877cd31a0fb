package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/racekit/racekit/controller"
	"github.com/racekit/racekit/controller/registry"
)

// controllerFlags are the settings of racekit controller.
type controllerFlags struct {
	kubeconfig  string
	namespace   string
	registryURL string
	metricsAddr string
	workers     int
}

const controllerUsage = "usage: racekit controller [--kubeconfig PATH] [--namespace NS] [--registry-url URL] [--metrics-addr ADDR] [--workers N]\n"

// controllerFlagSet returns the flags of racekit controller, bound to f.
// It prints nothing: runController reports errors and help itself.
func controllerFlagSet(f *controllerFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("controller", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "path to a kubeconfig file")
	fs.StringVar(&f.namespace, "namespace", "", "watch only this namespace (default: all)")
	fs.StringVar(&f.registryURL, "registry-url", "", "base URL of the registration service, such as http://registry:8080 (default: registration off)")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at /metrics on this address, such as :8080 (default: off)")
	fs.IntVar(&f.workers, "workers", 1, "how many WebApps to reconcile at once")
	return fs
}

// controllerHelp returns what racekit controller -h prints: the usage, what
// the command does, and its flags.
func controllerHelp() string {
	var b strings.Builder
	b.WriteString(controllerUsage + `
Runs the reference controller against a cluster until SIGINT or SIGTERM.
The kubeconfig comes from --kubeconfig, then $KUBECONFIG, then the
in-cluster service account, then ~/.kube/config.

Flags:
`)
	fs := controllerFlagSet(&controllerFlags{})
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return b.String()
}

// parseControllerFlags parses args and checks the values. Its errors are
// usage errors; flag.ErrHelp means -h was asked for.
func parseControllerFlags(args []string) (controllerFlags, error) {
	var f controllerFlags
	fs := controllerFlagSet(&f)
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if f.workers < 1 {
		return f, fmt.Errorf("--workers must be at least 1, got %d", f.workers)
	}
	if f.registryURL != "" {
		u, err := url.Parse(f.registryURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return f, fmt.Errorf("--registry-url must be an http or https URL, got %q", f.registryURL)
		}
	}
	return f, nil
}

// loadKubeconfig returns the client config the usual way: the explicit
// path, then $KUBECONFIG (read through getenv), then the in-cluster service
// account, then ~/.kube/config.
func loadKubeconfig(path string, getenv func(string) string) (*rest.Config, error) {
	rules := &clientcmd.ClientConfigLoadingRules{}
	switch {
	case path != "":
		rules.ExplicitPath = path
	case getenv(clientcmd.RecommendedConfigPathEnvVar) != "":
		env := getenv(clientcmd.RecommendedConfigPathEnvVar)
		rules.Precedence = filepath.SplitList(env)
		if !slices.ContainsFunc(rules.Precedence, exists) {
			return nil, fmt.Errorf("no kubeconfig: no file of $KUBECONFIG (%s) exists", env)
		}
	default:
		if cfg, err := rest.InClusterConfig(); err == nil {
			return cfg, nil
		}
		if !exists(clientcmd.RecommendedHomeFile) {
			return nil, errors.New("no kubeconfig: pass --kubeconfig, set $KUBECONFIG, run in a cluster, or create ~/.kube/config")
		}
		rules.Precedence = []string{clientcmd.RecommendedHomeFile}
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	return cfg, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// runController is racekit controller: the reference controller, built the
// production way, with no hooks and no recorder.
func runController(args []string, stdout, stderr io.Writer) int {
	f, err := parseControllerFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, controllerHelp())
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "racekit controller: %v\n%s", err, controllerUsage)
		return exitUsage
	}
	cfg, err := loadKubeconfig(f.kubeconfig, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "racekit controller: %v\n", err)
		return exitFail
	}
	// The API server takes the field manager from the user agent.
	cfg.UserAgent = "racekit-controller"
	opts := controller.RunOptions{Namespace: f.namespace, Workers: f.workers, MetricsAddr: f.metricsAddr}
	opts.Metrics = controller.NewMetrics()
	if f.registryURL != "" {
		opts.Registry = registry.NewClient(f.registryURL, &http.Client{Timeout: 30 * time.Second})
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = klog.NewContext(ctx, klog.Background().WithName("controller"))
	// controller-runtime's client logs the API server's warnings through
	// its own logger: send them where the controller's log goes.
	ctrllog.SetLogger(klog.Background())
	if err := controller.Run(ctx, cfg, opts); err != nil {
		fmt.Fprintf(stderr, "racekit controller: %v\n", err)
		return exitFail
	}
	return exitOK
}
