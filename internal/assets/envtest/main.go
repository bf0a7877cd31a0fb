// Command envtest builds kube-apiserver and etcd from source into the
// user's cache, as `racekit envtest` does; with the argument
// controller-manager, scheduler or kubemark it builds
// kube-controller-manager, kube-scheduler or kubemark instead (make
// controller-manager, make scheduler, make kubemark). make runs this one
// instead of racekit: it imports nothing but the standard library and
// package assets, so the long control-plane build starts at once, without
// compiling racekit's own dependencies first (which the tests then compile
// in the configuration they run in).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/racekit/racekit/internal/assets"
)

// stages are what envtest builds, by its argument ("" for none).
var stages = map[string]func(context.Context, string, io.Writer) error{
	"":                   assets.Prepare,
	"controller-manager": assets.PrepareControllerManager,
	"scheduler":          assets.PrepareScheduler,
	"kubemark":           assets.PrepareKubemark,
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	stage := ""
	if len(os.Args) == 2 {
		stage = os.Args[1]
	}
	prepare, ok := stages[stage]
	if !ok || len(os.Args) > 2 {
		fmt.Fprintf(os.Stderr, "usage: envtest [controller-manager|scheduler|kubemark]\n")
		os.Exit(2)
	}
	if stage == "" {
		stage = "envtest"
	}
	wd, err := os.Getwd()
	if err == nil {
		err = prepare(ctx, wd, os.Stdout)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", stage, err)
		os.Exit(1)
	}
}
