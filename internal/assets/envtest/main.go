// Command envtest builds kube-apiserver and etcd from source into the
// user's cache, as `racekit envtest` does; with the argument
// controller-manager it builds kube-controller-manager instead (make
// controller-manager). make runs this one instead: it
// imports nothing but the standard library and package assets, so the long
// control-plane build starts at once, without compiling racekit's own
// dependencies first (which the tests then compile in the configuration
// they run in).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/racekit/racekit/internal/assets"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	stage := "envtest"
	if len(os.Args) == 2 && os.Args[1] == "controller-manager" {
		stage = "controller-manager"
	} else if len(os.Args) > 1 {
		fmt.Fprintf(os.Stderr, "usage: envtest [controller-manager]\n")
		os.Exit(2)
	}
	wd, err := os.Getwd()
	if err == nil {
		if stage == "envtest" {
			err = assets.Prepare(ctx, wd, os.Stdout)
		} else {
			err = assets.PrepareControllerManager(ctx, wd, os.Stdout)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", stage, err)
		os.Exit(1)
	}
}
