// Command envtest builds kube-apiserver and etcd from source into the
// user's cache, as `racekit envtest` does. make runs this one instead: it
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
	wd, err := os.Getwd()
	if err == nil {
		err = assets.Prepare(ctx, wd, os.Stdout)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "envtest: %v\n", err)
		os.Exit(1)
	}
}
