// Command racekit is the workshop and operations tool of racekit.
//
//	racekit run           run race scenarios and show their timelines
//	racekit envtest       build kube-apiserver and etcd from source, once
//	racekit controller    run the reference controller against a cluster
//	racekit help          show the commands
//	racekit help scenario show the scenario language
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/racekit/racekit/internal/assets"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes: 0 for success, 1 for a failure, 2 for a usage error.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "run":
		return runCmd(args[1:], stdout, stderr)
	case "envtest":
		return envtest(stdout, stderr)
	case "controller":
		return runController(args[1:], stderr)
	case "help", "-h", "--help":
		if len(args) > 1 && args[1] == "scenario" {
			if len(args) > 2 && args[2] == "--markdown" {
				fmt.Fprint(stdout, languageMarkdown())
				return exitOK
			}
			fmt.Fprint(stdout, languageText())
			return exitOK
		}
		usage(stdout)
		return exitOK
	default:
		fmt.Fprintf(stderr, "racekit: unknown command %q\n", args[0])
		usage(stderr)
		return exitUsage
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: racekit COMMAND

Commands:
  run             run race scenarios (the flagship when no file is given); racekit run -h
  envtest         build kube-apiserver and etcd from source into the cache (once)
  controller      run the reference controller against a cluster (racekit controller -h)
  help            show this help
  help scenario   show the scenario language: commands, hook points, verbs
`)
}

func envtest(stdout, stderr io.Writer) int {
	if dir := os.Getenv(assets.EnvVar); dir != "" {
		if _, err := assets.Find(); err != nil {
			fmt.Fprintf(stderr, "racekit envtest: %v\n", err)
			return exitFail
		}
		fmt.Fprintf(stdout, "envtest: using %s=%s; nothing to build\n", assets.EnvVar, dir)
		return exitOK
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "racekit envtest: %v\n", err)
		return exitFail
	}
	root, err := assets.Root(wd)
	if err != nil {
		fmt.Fprintf(stderr, "racekit envtest: %v\n", err)
		return exitFail
	}
	if _, err := assets.Build(ctx, root, stdout); err != nil {
		fmt.Fprintf(stderr, "racekit envtest: %v\n", err)
		return exitFail
	}
	return exitOK
}
