// Command operators builds every operator release realbugs races into the
// user's cache (make operators).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/racekit/racekit/realbugs/operators"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for _, o := range operators.All {
		if _, err := o.Build(ctx, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "operators: %v\n", err)
			os.Exit(1)
		}
	}
}
