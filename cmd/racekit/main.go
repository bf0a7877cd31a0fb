// Command racekit is the workshop and operations tool of racekit.
//
//	racekit run           run race scenarios and show their timelines
//	racekit explore       run a workload under interferers at every moment
//	racekit envtest       build kube-apiserver and etcd from source, once
//	racekit controller    run the reference controller against a cluster
//	racekit proxy         serve a racing proxy and print each call as it is answered
//	racekit help          show the commands
//	racekit help scenario show the scenario language
//
// Every command prints its usage on standard output with -h or --help, as
// does racekit help COMMAND.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/racekit/racekit/internal/assets"
	"github.com/racekit/racekit/internal/hint"
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

// commands are the names racekit accepts as its first argument.
var commands = []string{"run", "explore", "envtest", "controller", "proxy", "help"}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "run":
		return runCmd(args[1:], stdout, stderr)
	case "explore":
		return exploreCmd(args[1:], stdout, stderr)
	case "envtest":
		return envtest(args[1:], stdout, stderr)
	case "controller":
		return runController(args[1:], stdout, stderr)
	case "proxy":
		return proxyCmd(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		return help(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "racekit: unknown command %q%s\n", args[0], hint.DidYouMean(args[0], commands))
		usage(stderr)
		return exitUsage
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: racekit COMMAND [ARGS]

Commands:
  run             run race scenarios (the flagship when no file is given)
  explore         run a scenario's workload with its interferers at every moment
  envtest         build kube-apiserver and etcd from source into the cache (once)
  controller      run the reference controller against a cluster
  proxy           serve a racing proxy on a control plane of its own, with a
                  kubeconfig per actor, and print each call as it is answered
  help            show this help
  help scenario   show the scenario language: commands, hook points, verbs
                  (help scenario NAME: one command in full)

racekit COMMAND -h (or racekit help COMMAND) shows a command's usage and flags.
`)
}

// helpUsage is the usage of racekit help itself.
const helpUsage = `usage: racekit help [COMMAND | scenario [--markdown | NAME]]

Shows racekit's commands, one command's usage (the same as racekit COMMAND
-h), or the scenario language: its commands, each in one line; with NAME,
one scenario command in full (its Summary and Detail); with --markdown,
the scenario language as docs/scenario-language.md holds it.
`

// help is racekit help: the commands, one command's usage, or the scenario
// language, on stdout.
func help(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		usage(stdout)
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help"):
		fmt.Fprint(stdout, helpUsage)
	case len(args) == 1 && args[0] == "scenario":
		fmt.Fprint(stdout, languageText())
	case len(args) == 2 && args[0] == "scenario" && args[1] == "--markdown":
		fmt.Fprint(stdout, languageMarkdown())
	case len(args) == 2 && args[0] == "scenario" && !strings.HasPrefix(args[1], "-"):
		text, err := commandText(args[1])
		if err != nil {
			fmt.Fprintf(stderr, "racekit help scenario: %v\n", err)
			return exitUsage
		}
		fmt.Fprint(stdout, text)
	case len(args) == 1 && args[0] != "help" && slices.Contains(commands, args[0]):
		return run([]string{args[0], "-h"}, stdout, stderr)
	default:
		var didYouMean string
		if topics := slices.Concat(commands, []string{"scenario"}); !slices.Contains(topics, args[0]) {
			didYouMean = hint.DidYouMean(args[0], topics)
		}
		fmt.Fprintf(stderr, "racekit help: no help for %q%s\n%s", strings.Join(args, " "), didYouMean, helpUsage)
		return exitUsage
	}
	return exitOK
}

const envtestUsage = `usage: racekit envtest

Builds kube-apiserver ` + assets.KubernetesVersion + ` and etcd ` + assets.EtcdVersion + ` from their Go modules,
through the nested modules under this checkout's tools/, into
~/.cache/racekit/envtest/ (about 10 minutes on 2 cores the first time), and
does nothing when they are there. With $` + assets.EnvVar + ` set, it checks the
binaries there instead and builds nothing.
`

// flagsDone handles how parsing a command's flags ended: -h prints help
// and the flags' defaults to stdout (exit 0); any other error prints it
// with usage to stderr (exit 2). done is false when the command goes on.
func flagsDone(name string, err error, fl *flag.FlagSet, help, usage string, stdout, stderr io.Writer) (code int, done bool) {
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, help)
		fl.SetOutput(stdout)
		fl.PrintDefaults()
		return exitOK, true
	case err != nil:
		fmt.Fprintf(stderr, "racekit %s: %v\n%s", name, err, usage)
		return exitUsage, true
	}
	return 0, false
}

func envtest(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("envtest", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	if err := fl.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, envtestUsage)
		return exitOK
	} else if err != nil {
		fmt.Fprintf(stderr, "racekit envtest: %v\n%s", err, envtestUsage)
		return exitUsage
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "racekit envtest: unexpected argument %q\n%s", fl.Arg(0), envtestUsage)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	wd, err := os.Getwd()
	if err == nil {
		err = assets.Prepare(ctx, wd, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "racekit envtest: %v\n", err)
		return exitFail
	}
	return exitOK
}
