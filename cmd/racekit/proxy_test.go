package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/racekit/racekit/harness"
	"github.com/racekit/racekit/harness/proxy"
	"github.com/racekit/racekit/hooks"
)

// TestProxyUsage checks that racekit proxy refuses bad arguments, and a
// kubeconfig folder that holds a file it did not write, with exit code 2
// and a message naming what was wrong, before anything starts, and leaves
// the folder as it was.
func TestProxyUsage(t *testing.T) {
	noBuild(t) // a control plane started by mistake fails at once, with status 1
	base := t.TempDir()
	folder := func(name string, files map[string]string) string {
		dir := filepath.Join(base, name)
		assert.NilError(t, os.MkdirAll(dir, 0o755))
		for f, data := range files {
			assert.NilError(t, os.WriteFile(filepath.Join(dir, f), []byte(data), 0o644))
		}
		return dir
	}
	notes := folder("notes", map[string]string{"notes.txt": "mine"})
	// A file named after an actor that racekit proxy did not write: it
	// would overwrite it.
	mine := folder("mine", map[string]string{"alice": "apiVersion: v1\nkind: Config\n"})
	sub := folder("sub", nil)
	assert.NilError(t, os.Mkdir(filepath.Join(sub, "alice"), 0o755))
	file := filepath.Join(notes, "notes.txt")

	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"empty actor", []string{"--actors", "alice,,bob"}, `racekit proxy: bad --actors "alice,,bob": an empty name`},
		{"no actors", []string{"--actors", ""}, `racekit proxy: bad --actors "": an empty name`},
		{"upper-case actor", []string{"--actors", "Alice"}, `racekit proxy: bad --actors "Alice": "Alice" is no actor name`},
		{"actor with a slash", []string{"--actors", "a/b"}, `racekit proxy: bad --actors "a/b": "a/b" is no actor name`},
		{"actor twice", []string{"--actors", "alice,bob,alice"}, `racekit proxy: bad --actors "alice,bob,alice": alice is named twice`},
		{"anonymous", []string{"--actors", "anonymous"}, `racekit proxy: bad --actors "anonymous": anonymous is who a call without an actor's token shows as`},
		{"unexpected argument", []string{"now"}, `racekit proxy: unexpected argument "now"`},
		{"unknown flag", []string{"--port", "8080"}, "racekit proxy: flag provided but not defined: -port"},
		{"folder with a file of the user's", []string{"--kubeconfig-dir", notes},
			"racekit proxy: --kubeconfig-dir: " + notes + " holds notes.txt, which racekit proxy did not write"},
		{"folder with an actor's name taken", []string{"--kubeconfig-dir", mine, "--actors", "alice"},
			"racekit proxy: --kubeconfig-dir: " + mine + " holds alice, which racekit proxy did not write"},
		{"folder with a folder", []string{"--kubeconfig-dir", sub},
			"racekit proxy: --kubeconfig-dir: " + sub + " holds alice, which racekit proxy did not write"},
		{"a file for a folder", []string{"--kubeconfig-dir", file},
			"racekit proxy: --kubeconfig-dir: " + file + " is not a folder to write kubeconfigs into"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			assert.Equal(t, run(append([]string{"proxy"}, tc.args...), &stdout, &stderr), exitUsage, "stderr: %s", stderr.String())
			assert.Assert(t, strings.HasPrefix(stderr.String(), tc.wantErr), "stderr:\n%s", stderr.String())
			assert.Equal(t, stdout.String(), "")
		})
	}
	// Nothing was written or removed.
	for dir, want := range map[string][]string{notes: {"notes.txt"}, mine: {"alice"}, sub: {"alice"}} {
		entries, err := os.ReadDir(dir)
		assert.NilError(t, err)
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		assert.DeepEqual(t, got, want)
	}
	data, err := os.ReadFile(filepath.Join(mine, "alice"))
	assert.NilError(t, err)
	assert.Equal(t, string(data), "apiVersion: v1\nkind: Config\n")
}

// TestOwnKubeconfig checks that racekit proxy knows the kubeconfigs the
// racing proxy writes as its own, under their actor's name only, so that a
// second racekit proxy may overwrite them in the same folder.
func TestOwnKubeconfig(t *testing.T) {
	upstream, err := url.Parse("https://127.0.0.1:1")
	assert.NilError(t, err)
	p, err := proxy.Start(proxy.Options{Upstream: upstream, Transport: func(string) (http.RoundTripper, error) { return http.DefaultTransport, nil }})
	assert.NilError(t, err)
	defer p.Close()
	assert.NilError(t, p.AddActor("alice"))
	alice, err := p.Kubeconfig("alice", "rk-proxy-x")
	assert.NilError(t, err)

	ours := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(ours, "alice"), alice, 0o600))
	assert.Assert(t, ownKubeconfig(filepath.Join(ours, "alice")))
	assert.NilError(t, checkKubeconfigDir(ours))
	assert.NilError(t, checkKubeconfigDir(filepath.Join(ours, "absent")))
	assert.NilError(t, checkKubeconfigDir(t.TempDir()))

	// Alice's kubeconfig under bob's name is not what racekit proxy wrote
	// as bob.
	renamed := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(renamed, "bob"), alice, 0o600))
	assert.Assert(t, !ownKubeconfig(filepath.Join(renamed, "bob")))
	assert.ErrorContains(t, checkKubeconfigDir(renamed), "holds bob, which racekit proxy did not write")
}

// TestLiveLine checks how racekit proxy prints an answered exchange: as a
// trace line, with the real resourceVersions.
func TestLiveLine(t *testing.T) {
	tests := []struct {
		name string
		x    harness.Exchange
		want string
	}{
		{"create", harness.Exchange{Seq: 3, Call: hooks.Call{Actor: "alice", Verb: "create", Resource: "configmaps", Name: "demo"}, Code: 201, Reason: "Created", GotRV: "812"},
			"   3 alice      create configmaps/demo                         -> 201 Created      812\n"},
		{"conflict", harness.Exchange{Seq: 12, Call: hooks.Call{Actor: "controller", Verb: "update", Resource: "deployments", Name: "web"}, SentRV: "811", Code: 409, Reason: "Conflict"},
			"  12 controller update deployments/web              sent 811   -> 409 Conflict\n"},
		{"refused", harness.Exchange{Seq: 4, Call: hooks.Call{Actor: "anonymous", Verb: "list", Resource: "configmaps"}, Code: 401, Reason: "Unauthorized"},
			"   4 anonymous  list   configmaps                              -> 401 Unauthorized\n"},
		{"no answer", harness.Exchange{Seq: 5, Call: hooks.Call{Actor: "bob", Verb: "get", Resource: "configmaps", Name: "demo"}, Err: "connection refused"},
			"   5 bob        get    configmaps/demo                         -> error            connection refused\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.x.LiveLine(), tc.want)
		})
	}
}

// killOnFailure ends cmd and what runs from tmp when t has failed, so that
// a failed test leaves no racekit proxy, nor its control plane, behind;
// and says so when guard had killed them, which the failure, output that
// ended too soon, does not tell.
func killOnFailure(t *testing.T, cmd *exec.Cmd, tmp string, guard *hangGuard) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		if procs := guard.hung.Load(); procs != nil {
			t.Logf("racekit proxy was still running when the guard against a hang fired, and the guard killed it; running then:\n%s", orNothing(*procs))
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		endOrphans(running(tmp))
	})
}

// proxyNamespace returns the namespace racekit proxy printed in out.
func proxyNamespace(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^racekit proxy: namespace (\S+)$`).FindStringSubmatch(out)
	assert.Assert(t, m != nil, "racekit proxy printed no namespace:\n%s", out)
	return m[1]
}

// TestProxyEndToEnd runs racekit proxy as a process, with a kubeconfig for
// alice, and checks that a client-go client built from that kubeconfig
// creates a ConfigMap through the proxy and racekit prints the exchange as
// it is answered; that a client with a token the proxy never gave is
// refused with 401, printed as the actor anonymous; and that SIGINT, the
// normal end, stops racekit with status 0 and leaves no process and
// nothing in its TMPDIR behind, and the kubeconfig in the user's folder.
func TestProxyEndToEnd(t *testing.T) {
	t.Parallel()
	built(t)
	dir := filepath.Join(t.TempDir(), "kube") // absent: racekit creates it
	started := time.Now()
	cmd, out, tmp := start(t, bins.racekit, "", nil, "proxy", "--kubeconfig-dir", dir, "--actors", "alice")
	// A guard against a hang, not a speed target: this takes seconds.
	guard := guardHang(cmd, tmp, 3*time.Minute)
	defer guard.stop()
	killOnFailure(t, cmd, tmp, guard)

	seen := readUntil(t, out, "racekit proxy: ready")
	ns := proxyNamespace(t, seen)
	alice := filepath.Join(dir, "alice")
	for _, want := range []string{
		"    alice  " + alice + "\n",
		"    kubectl --kubeconfig " + alice + " -n " + ns + " get configmaps\n",
		"    racekit controller --kubeconfig " + alice + " --namespace " + ns + "\n",
	} {
		assert.Assert(t, strings.Contains(seen, want), "want %q in the output:\n%s", want, seen)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// phase 1: alice creates a ConfigMap, and racekit prints the call.
	cfg, err := clientcmd.BuildConfigFromFlags("", alice)
	assert.NilError(t, err)
	kube, err := kubernetes.NewForConfig(cfg)
	assert.NilError(t, err)
	cm, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "racekit-proxy-e2e"},
		Data:       map[string]string{"who": "alice"},
	}, metav1.CreateOptions{})
	assert.NilError(t, err)
	// A create names its object in its body: the proxy must hand the
	// hooks a body they can read again.
	created := regexp.MustCompile(`^ *\d+ alice +create +configmaps/racekit-proxy-e2e +-> 201 Created +` + cm.ResourceVersion + `$`)
	seen += readUntilLine(t, out, "alice's create, answered 201 with resourceVersion "+cm.ResourceVersion, func(line string) bool {
		return created.MatchString(strings.TrimSuffix(line, "\n"))
	})

	// phase 2: a token the proxy never gave is refused, as anonymous.
	raw, err := clientcmd.LoadFromFile(alice)
	assert.NilError(t, err)
	raw.AuthInfos["alice"].Token = "not-a-token-racekit-gave"
	wrong := filepath.Join(t.TempDir(), "wrong")
	assert.NilError(t, clientcmd.WriteToFile(*raw, wrong))
	cfg, err = clientcmd.BuildConfigFromFlags("", wrong)
	assert.NilError(t, err)
	stranger, err := kubernetes.NewForConfig(cfg)
	assert.NilError(t, err)
	_, err = stranger.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	assert.Assert(t, apierrors.IsUnauthorized(err), "want 401 Unauthorized, got %v", err)
	refused := regexp.MustCompile(`^ *\d+ anonymous +list +configmaps +-> 401 Unauthorized$`)
	seen += readUntilLine(t, out, "anonymous's list, answered 401", func(line string) bool {
		return refused.MatchString(strings.TrimSuffix(line, "\n"))
	})

	// phase 3: SIGINT ends it, as it should end.
	assert.NilError(t, cmd.Process.Signal(os.Interrupt))
	rest, _ := io.ReadAll(out) // until the process has exited
	seen += string(rest)
	guard.fatalIfFired(t, cmd, started, seen)
	assert.Equal(t, status(cmd), "exit status 0", "output:\n%s", seen)
	assert.Assert(t, strings.Contains(seen, "racekit proxy: interrupt signal received: stopping the proxy and the control plane"), "output:\n%s", seen)
	procs, files := leftovers(t, tmp)
	assert.Assert(t, len(procs) == 0, "processes left running:\n%s", strings.Join(procs, "\n"))
	assert.Assert(t, len(files) == 0, "left in TMPDIR: %v", files)
	assert.Assert(t, ownKubeconfig(alice), "the kubeconfig in the user's folder is gone")
}

// TestProxyDefaultFolder runs racekit proxy with no flags: it writes a
// kubeconfig for controller, alice and bob into a new temporary folder,
// and SIGTERM stops it with status 0 and removes the folder.
func TestProxyDefaultFolder(t *testing.T) {
	t.Parallel()
	built(t)
	started := time.Now()
	cmd, out, tmp := start(t, bins.racekit, "", nil, "proxy")
	guard := guardHang(cmd, tmp, 3*time.Minute)
	defer guard.stop()
	killOnFailure(t, cmd, tmp, guard)

	seen := readUntil(t, out, "racekit proxy: ready")
	paths := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(seen))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && strings.HasPrefix(sc.Text(), "    ") {
			paths[f[0]] = f[1]
		}
	}
	assert.Equal(t, len(paths), 3, "want a kubeconfig for controller, alice and bob:\n%s", seen)
	var folder string
	for _, actor := range []string{"controller", "alice", "bob"} {
		p := paths[actor]
		assert.Assert(t, strings.HasPrefix(p, tmp+string(filepath.Separator)), "%s's kubeconfig %s is not in racekit's TMPDIR %s", actor, p, tmp)
		assert.Assert(t, ownKubeconfig(p), "%s's kubeconfig %s", actor, p)
		folder = filepath.Dir(p)
	}
	assert.Assert(t, strings.Contains(seen, "    racekit controller --kubeconfig "+paths["controller"]+" --namespace "+proxyNamespace(t, seen)+"\n"), "output:\n%s", seen)

	assert.NilError(t, cmd.Process.Signal(syscall.SIGTERM))
	rest, _ := io.ReadAll(out) // until the process has exited
	seen += string(rest)
	guard.fatalIfFired(t, cmd, started, seen)
	assert.Equal(t, status(cmd), "exit status 0", "output:\n%s", seen)
	assert.Assert(t, strings.Contains(seen, "racekit proxy: terminated signal received: stopping the proxy and the control plane"), "output:\n%s", seen)
	_, err := os.Stat(folder)
	assert.Assert(t, os.IsNotExist(err), "the kubeconfig folder %s is still there: %v", folder, err)
	procs, files := leftovers(t, tmp)
	assert.Assert(t, len(procs) == 0, "processes left running:\n%s", strings.Join(procs, "\n"))
	assert.Assert(t, len(files) == 0, "left in TMPDIR: %v", files)
}
