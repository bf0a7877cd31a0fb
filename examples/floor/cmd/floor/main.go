// Command floor runs the replica floor controller (package floor) for the
// Deployments of one namespace, until SIGTERM or SIGINT.
//
//	floor --namespace NAMESPACE [--kubeconfig PATH] [--workers N]
//
// It exits 0 on a clean stop and 1 on an error. It logs with klog to
// stderr; klog's own flags, such as -v, are accepted too.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/racekit/racekit/examples/floor"
)

func main() {
	klog.InitFlags(nil)
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "path to a kubeconfig (default $KUBECONFIG; empty means in-cluster config)")
	namespace := flag.String("namespace", os.Getenv("NAMESPACE"), "namespace whose Deployments to watch (default $NAMESPACE; required)")
	workers := flag.Int("workers", 1, "number of workers that sync Deployments")
	flag.Parse()

	// set up signals so we handle the shutdown signal gracefully
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	logger := klog.FromContext(ctx)

	if err := run(ctx, *kubeconfig, *namespace, *workers); err != nil {
		logger.Error(err, "Replica floor controller failed")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	logger.Info("Replica floor controller stopped")
	klog.Flush()
}

func run(ctx context.Context, kubeconfig, namespace string, workers int) error {
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: floor takes flags only", flag.Args())
	}
	if namespace == "" {
		return errors.New("no namespace: set --namespace or $NAMESPACE")
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig %q: %w", kubeconfig, err)
	}

	return floor.Run(ctx, cfg, namespace, workers)
}
