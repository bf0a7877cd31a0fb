package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/racekit/racekit/harness"
)

const proxyUsage = "usage: racekit proxy [--kubeconfig-dir DIR] [--actors NAME,...]\n"

const proxyHelp = proxyUsage + `
Runs racekit's own control plane, as racekit run does, and one scenario (a
namespace) with its racing proxy in front of the API server, for exploring
by hand what a controller and people do to one another. It writes a
kubeconfig per actor into DIR, each with a bearer token of its own that
makes the proxy record its calls as that actor, and prints the namespace,
the kubeconfigs and two commands to try. Then it prints

    racekit proxy: ready

and then one line per call, as the API server answers it: the call's
number, the actor, the verb, the object, the resourceVersion it sent, the
answer and the resourceVersion it got, as racekit run's traces show them
but with the real resourceVersions, which kubectl shows too. A call without
an actor's token is refused with 401 by the proxy itself, and shows as the
actor anonymous. As in a scenario, a list or watch of every namespace
(kubectl get pods -A) is kept to the namespace, one of nodes to the nodes
labelled racekit.dev/scenario=NAMESPACE (kubectl get nodes lists no other),
and impersonation headers and exec, attach and port-forward are refused.

DIR must be absent, empty, or hold only kubeconfigs racekit proxy wrote
before, which it overwrites; racekit creates it, and never overwrites
another file. Without --kubeconfig-dir, racekit writes the kubeconfigs into
a new temporary folder, which it prints, and removes it when it stops.

It runs until SIGINT (Ctrl-C) or SIGTERM, then closes the proxy and stops
the control plane. Exit status: 0 when it was stopped so, which is the
normal end (unlike racekit run, which a signal cuts short and which then
dies by it), 1 when it could not start or could no longer write its
output, 2 for a usage error.

Flags:
`

// proxyFlags are racekit proxy's arguments, parsed.
type proxyFlags struct {
	dir    string // "" for a new temporary folder
	actors []string
}

// proxyActor is the form of an actor's name, which is also its kubeconfig's
// file name: the harness's rule for actor names.
var proxyActor = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}$`)

// parseProxyFlags parses args. It returns flag.ErrHelp for -h, and a
// message for anything else wrong; it touches no file.
func parseProxyFlags(args []string) (proxyFlags, *flag.FlagSet, error) {
	var f proxyFlags
	fl := flag.NewFlagSet("proxy", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	fl.StringVar(&f.dir, "kubeconfig-dir", "", "write the actors' kubeconfigs into `DIR` (default: a new temporary folder, removed at the end)")
	actors := fl.String("actors", "controller,alice,bob", "the actors, as `NAME,...`: a kubeconfig for each")
	if err := fl.Parse(args); err != nil {
		return f, fl, err
	}
	if fl.NArg() > 0 {
		return f, fl, fmt.Errorf("unexpected argument %q", fl.Arg(0))
	}
	for _, a := range strings.Split(*actors, ",") {
		switch {
		case a == "":
			return f, fl, fmt.Errorf("bad --actors %q: an empty name; want names separated by commas, such as controller,alice,bob", *actors)
		case !proxyActor.MatchString(a):
			return f, fl, fmt.Errorf("bad --actors %q: %q is no actor name; want lower-case names such as controller,alice,bob", *actors, a)
		case a == harness.AnonymousActor:
			return f, fl, fmt.Errorf("bad --actors %q: %s is who a call without an actor's token shows as", *actors, a)
		case slices.Contains(f.actors, a):
			return f, fl, fmt.Errorf("bad --actors %q: %s is named twice", *actors, a)
		}
		f.actors = append(f.actors, a)
	}
	return f, fl, nil
}

// checkKubeconfigDir returns an error unless dir is absent, or a folder
// that holds only kubeconfigs racekit proxy wrote: racekit proxy overwrites
// those, and never a file of the user's.
func checkKubeconfigDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s is not a folder to write kubeconfigs into: %w", dir, err)
	}
	for _, e := range entries {
		if !ownKubeconfig(filepath.Join(dir, e.Name())) {
			return fmt.Errorf("%s holds %s, which racekit proxy did not write: give an empty or new folder, or one racekit proxy wrote before, so that no file of yours is overwritten", dir, e.Name())
		}
	}
	return nil
}

// ownKubeconfig reports whether path is a kubeconfig racekit proxy wrote
// for the actor its file is named after, as the racing proxy writes them
// (harness/proxy's Kubeconfig): the cluster racekit and the current
// context racekit-ACTOR, for the user ACTOR.
func ownKubeconfig(path string) bool {
	actor := filepath.Base(path)
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() || !proxyActor.MatchString(actor) {
		return false
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return false
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	return ok && cfg.CurrentContext == "racekit-"+actor && ctx.Cluster == "racekit" && ctx.AuthInfo == actor &&
		cfg.Clusters["racekit"] != nil && cfg.AuthInfos[actor] != nil
}

// proxyCmd is racekit proxy. It returns the process exit code.
func proxyCmd(args []string, stdout, stderr io.Writer) int {
	// As in racekit run: a closed output pipe must end the proxy the
	// normal way, stopping the control plane, and envtest's logger stays
	// quiet.
	signal.Ignore(syscall.SIGPIPE)
	ctrllog.SetLogger(logr.Discard())
	f, fl, err := parseProxyFlags(args)
	if code, done := flagsDone("proxy", err, fl, proxyHelp, proxyUsage, stdout, stderr); done {
		return code
	}
	if f.dir != "" {
		if err := checkKubeconfigDir(f.dir); err != nil {
			fmt.Fprintf(stderr, "racekit proxy: --kubeconfig-dir: %v\n", err)
			return exitUsage
		}
	}

	// A signal is how racekit proxy ends, so it handles SIGINT and SIGTERM
	// itself, from before the control plane starts: one that arrives
	// while it starts stops it once it is up. The control plane's own
	// handler would end the process as interrupted, and racekit proxy
	// must close its scenario first and end normally.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cp, err := startControlPlane(ctx, stderr, harness.WithoutSignalHandler())
	if ctx.Err() != nil {
		// Asked to stop: a start cut short has stopped what it started.
		if err == nil {
			cp.Close()
		}
		fmt.Fprintf(stderr, "racekit proxy: %v as the control plane started: stopped it\n", context.Cause(ctx))
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "racekit proxy: %v\n", err)
		return exitFail
	}
	defer cp.Close()
	dir := f.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "racekit-proxy-"); err != nil {
			fmt.Fprintf(stderr, "racekit proxy: %v\n", err)
			return exitFail
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		fmt.Fprintf(stderr, "racekit proxy: --kubeconfig-dir: %v\n", err)
		return exitFail
	}
	// The paths it prints are to be pasted into commands run anywhere.
	if dir, err = filepath.Abs(dir); err != nil {
		fmt.Fprintf(stderr, "racekit proxy: %v\n", err)
		return exitFail
	}
	// The scenario's calls are not tied to ctx: they end when the proxy
	// closes, after the signal.
	sc, err := harness.NewScenario(context.Background(), cp, "proxy", dir)
	if err != nil {
		fmt.Fprintf(stderr, "racekit proxy: %v\n", err)
		return exitFail
	}
	defer sc.Close()
	paths, err := writeKubeconfigs(sc, dir, f.actors)
	if err != nil {
		fmt.Fprintf(stderr, "racekit proxy: %v\n", err)
		return exitFail
	}
	err = printIntro(stdout, sc.Namespace, f.actors, paths)
	if err == nil {
		err = follow(ctx, sc, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "racekit proxy: %v; stopping the proxy and the control plane\n", err)
		return exitFail
	}
	fmt.Fprintf(stderr, "racekit proxy: %v: stopping the proxy and the control plane\n", context.Cause(ctx))
	return exitOK
}

// writeKubeconfigs writes each actor's kubeconfig into dir, refusing to
// overwrite a file racekit proxy did not write, and returns their paths.
func writeKubeconfigs(sc *harness.Scenario, dir string, actors []string) ([]string, error) {
	var paths []string
	for _, a := range actors {
		path := filepath.Join(dir, a)
		if _, err := os.Lstat(path); err == nil && !ownKubeconfig(path) {
			return nil, fmt.Errorf("%s appeared meanwhile, and racekit proxy did not write it: it stays as it is", path)
		}
		if err := harness.WriteKubeconfig(sc, a, path); err != nil {
			return nil, fmt.Errorf("kubeconfig of %s: %w", a, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// printIntro prints the namespace, the kubeconfigs, two commands to try
// and the ready line, and returns an error when w takes them no more.
func printIntro(w io.Writer, ns string, actors, paths []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "racekit proxy: namespace %s\n", ns)
	fmt.Fprintln(&b, "racekit proxy: kubeconfigs, one per actor:")
	width := 0
	for _, a := range actors {
		width = max(width, len(a))
	}
	for i, a := range actors {
		fmt.Fprintf(&b, "    %-*s  %s\n", width, a, paths[i])
	}
	// A person plays the first actor that is not the controller, and the
	// controller runs as the controller, when there is one.
	person, ctrl := paths[0], paths[0]
	for i, a := range actors {
		if a == harness.ControllerActor {
			ctrl = paths[i]
		}
	}
	for i, a := range actors {
		if a != harness.ControllerActor {
			person = paths[i]
			break
		}
	}
	fmt.Fprintln(&b, "racekit proxy: try")
	fmt.Fprintf(&b, "    kubectl --kubeconfig %s -n %s get configmaps\n", person, ns)
	fmt.Fprintf(&b, "    racekit controller --kubeconfig %s --namespace %s\n", ctrl, ns)
	fmt.Fprintln(&b, "racekit proxy: ready")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write the kubeconfigs' paths: %w", err)
	}
	return nil
}

// follow prints a line for each exchange of sc's trace as it is answered,
// until ctx ends. It wakes at each change of the trace, never on a timer.
// It returns an error when w takes a line no more.
func follow(ctx context.Context, sc *harness.Scenario, w io.Writer) error {
	printed := map[int]bool{} // by Seq, from the first exchange not printed on
	from := 0
	for {
		changed := sc.Changes() // before Trace, so that no change is missed
		xs := sc.Trace().Exchanges()
		for i := from; i < len(xs); i++ {
			x := xs[i]
			if printed[x.Seq] || (x.Code == 0 && x.Err == "") {
				continue
			}
			if _, err := io.WriteString(w, x.LiveLine()); err != nil {
				return fmt.Errorf("write the timeline: %w", err)
			}
			printed[x.Seq] = true
		}
		for from < len(xs) && printed[xs[from].Seq] {
			delete(printed, xs[from].Seq)
			from++
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil
		}
	}
}
