package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/racekit/racekit/harness/internal/testctrl"
	"github.com/racekit/racekit/internal/roundtrip"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// stuck never returns until the test process ends: a Run that ignores its
// context. quits returns at once.
var stuck = make(chan struct{})

// runningControllers are the controllers of the controller scripts
// (controllerScripts) that run on their own.
func runningControllers() []*Controller {
	run := func(f func(ctx context.Context, cfg *rest.Config, ns string) error) func(context.Context, *Instance) error {
		return func(ctx context.Context, in *Instance) error { return f(ctx, in.Config, in.Namespace) }
	}
	return []*Controller{
		{Name: "watcher", Scheme: kscheme.Scheme, For: &corev1.ConfigMap{}, Run: run(testctrl.WatchConfigMaps)},
		{Name: "stuck", Scheme: kscheme.Scheme, For: &corev1.ConfigMap{}, Run: func(context.Context, *Instance) error {
			<-stuck
			return nil
		}},
		{Name: "quits", Scheme: kscheme.Scheme, For: &corev1.ConfigMap{}, Run: func(context.Context, *Instance) error {
			return errors.New("no leader lease")
		}},
		{Name: "busy", Scheme: kscheme.Scheme, For: &corev1.ConfigMap{}, Run: run(testctrl.Busy)},
		{Name: "informer", Scheme: kscheme.Scheme, For: &appsv1.Deployment{}, Run: run(testctrl.InformDeployments)},
		// The secrets watcher watches Secrets and does nothing else: a
		// watcher beside a workload that writes something else.
		{Name: "secrets", Scheme: kscheme.Scheme, For: &corev1.Secret{}, Run: run(testctrl.InformSecrets)},
		// The mover deletes one ConfigMap, then creates another: a crash
		// between the two loses a value. The safe mover creates first.
		{Name: "mover", Scheme: kscheme.Scheme, For: &corev1.ConfigMap{}, Run: run(func(ctx context.Context, cfg *rest.Config, ns string) error {
			return testctrl.Move(ctx, cfg, ns, false)
		})},
		{Name: "mover-safe", Scheme: kscheme.Scheme, For: &corev1.ConfigMap{}, Run: run(func(ctx context.Context, cfg *rest.Config, ns string) error {
			return testctrl.Move(ctx, cfg, ns, true)
		})},
		// The sizer refuses a request smaller than the size applied, so
		// that where it ends depends on the requests it saw (an
		// unobserved state); the follower applies each.
		{Name: "sizer", Scheme: kscheme.Scheme, For: &corev1.ConfigMap{}, Run: run(func(ctx context.Context, cfg *rest.Config, ns string) error {
			return testctrl.Size(ctx, cfg, ns, false)
		})},
		{Name: "sizer-follow", Scheme: kscheme.Scheme, For: &corev1.ConfigMap{}, Run: run(func(ctx context.Context, cfg *rest.Config, ns string) error {
			return testctrl.Size(ctx, cfg, ns, true)
		})},
	}
}

// childEnv names what the harness's test binary is when a scenario spawns
// it: the watcher as a process of its own, or one of the faults below.
const childEnv = "RACEKIT_HARNESS_CHILD"

// runChild runs the test binary as the child its environment names, and
// reports whether it was one.
func runChild() bool {
	switch os.Getenv(childEnv) {
	case "":
		return false
	case "watcher", "watcher-protobuf", "mover", "mover-safe", "secrets":
		// What a controller's main does: a kubeconfig, a namespace, and
		// a context that SIGTERM ends.
		cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if os.Getenv(childEnv) == "watcher-protobuf" {
			// As controller-runtime's client does for the built-in kinds;
			// the first of its watches says what the API server answered.
			cfg.ContentType = "application/vnd.kubernetes.protobuf"
			cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
			cfg.Wrap(sayWatchMediaType)
		}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		ns := os.Getenv("NAMESPACE")
		what, run := "configmaps", func() error { return testctrl.WatchConfigMaps(ctx, cfg, ns) }
		switch child := os.Getenv(childEnv); {
		case strings.HasPrefix(child, "mover"):
			run = func() error { return testctrl.Move(ctx, cfg, ns, child == "mover-safe") }
		case child == "secrets":
			what, run = "secrets", func() error { return testctrl.InformSecrets(ctx, cfg, ns) }
		}
		fmt.Println(os.Getenv(childEnv), "watching", what, "in", ns)
		if err := run(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("stopped")
	case "copier", "drops", "leader", "lateleader":
		runManagerChild(os.Getenv(childEnv))
	case "quits":
		fmt.Println("no kubeconfig I like")
		os.Exit(3)
	case "metrics-cut":
		// Its metrics endpoint cuts its first answer off in the middle, as
		// a process being killed does, and it exits on its own after it:
		// idle must read what the process did next, not fail on the cut.
		ln, err := net.Listen("tcp", os.Getenv("METRICS"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("serving cut metrics on", ln.Addr())
		c, err := ln.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		// The answer's head, and the body cut off in the middle.
		_, _ = io.ReadAll(io.LimitReader(c, 1))
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4096\r\n\r\n# HELP workqueue_depth Current depth of workqueue\nworkqueue_depth{name=\"x\"")
		_ = c.Close()
		fmt.Println("cut one metrics answer off; exiting")
		os.Exit(0)
	case "deaf":
		// It ignores SIGTERM, then says so on the wire with one call,
		// which the scenario awaits before it halts it.
		signal.Ignore(syscall.SIGTERM)
		cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		kube, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if _, err := kube.CoreV1().ConfigMaps(os.Getenv("NAMESPACE")).List(context.Background(), metav1.ListOptions{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("SIGTERM? never heard of it")
		never := make(chan os.Signal, 1)
		signal.Notify(never, syscall.SIGUSR1)
		<-never
	default:
		fmt.Fprintf(os.Stderr, "unknown %s=%s\n", childEnv, os.Getenv(childEnv))
		os.Exit(2)
	}
	return true
}

// sayWatchMediaType prints the media type of the first watch stream the
// API server answers, so that a scenario can check what it held.
func sayWatchMediaType(next http.RoundTripper) http.RoundTripper {
	var once sync.Once
	return roundtrip.Func(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusOK && req.URL.Query().Get("watch") == "true" {
			once.Do(func() { fmt.Println("watch answered in", resp.Header.Get("Content-Type")) })
		}
		return resp, err
	})
}

// onPath puts this test binary's folder on PATH, so that scenarios spawn
// it by name (harness.test).
func onPath() {
	if exe, err := os.Executable(); err == nil {
		os.Setenv("PATH", filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
}
