package running

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/internal/assets"
)

// TestPods runs the scenarios of testdata/pods, which run the real
// kube-scheduler and kubelets (kubemark's hollow node), with
// kube-controller-manager's node lifecycle controller, through the racing
// proxy: a script with a want section must fail, at a line and with a
// message its regular expression matches; one without must pass. They run
// side by side, each with nodes of its own on one API server, as the
// catalogue's scenarios do.
func TestPods(t *testing.T) {
	for _, find := range []func() (string, error){assets.FindControllerManager, assets.FindScheduler, assets.FindKubemark} {
		if _, err := find(); err != nil {
			t.Fatalf("these tests run pods: %v", err)
		}
	}
	files, err := filepath.Glob("testdata/pods/*.txtar")
	assert.NilError(t, err)
	assert.Assert(t, len(files) > 0)
	// Each kubelet's root folder in /tmp is removed when its scenario
	// ends (removeKubeletRoots): at least one for each node line.
	var mu sync.Mutex
	var roots []string
	kubeletRootsRemoved = func(_ string, r []string) {
		mu.Lock()
		defer mu.Unlock()
		roots = append(roots, r...)
	}
	t.Cleanup(func() { kubeletRootsRemoved = func(string, []string) {} })
	nodes := 0
	// The group ends once its parallel scripts have.
	t.Run("scripts", func(t *testing.T) { runPodScripts(t, files, &nodes) })
	if t.Failed() {
		return
	}
	assert.Assert(t, len(roots) >= nodes, "the kubelets' root folders removed: %d for %d node lines: %v", len(roots), nodes, roots)
	for _, r := range roots {
		_, err := os.Stat(r)
		assert.Assert(t, os.IsNotExist(err), "a kubelet's root folder is still there: %s (%v)", r, err)
	}
}

// runPodScripts runs the pods scripts files side by side, and adds their
// node lines to nodes.
func runPodScripts(t *testing.T, files []string, nodes *int) {
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		data, err := os.ReadFile(file)
		assert.NilError(t, err)
		*nodes += len(regexp.MustCompile(`(?m)^node `).FindAll(data, -1))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			assert.NilError(t, err)
			_, want, hasWant := strings.Cut(string(data), "\n-- want --\n")
			res := language.RunFiles(context.Background(), controlPlane(t), kcmLanguage(file))
			assert.Equal(t, len(res), 1)
			out := res[0].Log
			if hasWant {
				want = strings.TrimSpace(want)
				assert.Assert(t, !res[0].Passed, "the script passed, but it must fail; output:\n%s", out)
				assert.Assert(t, regexp.MustCompile(want).MatchString(out), "output does not match %q:\n%s", want, out)
				return
			}
			assert.Assert(t, res[0].Passed, "the script failed:\n%s", out)
			if check, ok := podChecks[name]; ok {
				check(t, res[0].Trace)
			}
		})
	}
}

// podChecks are what the trace of a passing pods scenario must also show,
// which the script cannot say.
var podChecks = map[string]func(*testing.T, record.Trace){
	// The kubelet's heartbeat is its lease in kube-node-lease, as in a
	// cluster, not in the scenario's namespace, named as its node.
	"node_heartbeat": func(t *testing.T, tr record.Trace) {
		var leases []string
		for _, x := range tr.Exchanges() {
			if x.Actor == "n1" && x.Resource == "leases" && x.Code/100 == 2 {
				leases = append(leases, fmt.Sprintf("%s %s in %s: %d", x.Verb, x.Name, x.Namespace, x.Code))
			}
		}
		assert.Assert(t, len(leases) > 0, "the kubelet wrote no lease")
		for _, l := range leases {
			assert.Assert(t, regexp.MustCompile(`^(get|create|update) n1\.rk-node-heartbeat-\w+ in kube-node-lease: 20[01]$`).MatchString(l), "a lease call of the kubelet: %s", l)
		}
	},
}

// TestRemoveKubeletRoots checks which root folders a scenario removes
// for a node's actor: those that the logs of its own lives name, and
// nothing else.
func TestRemoveKubeletRoots(t *testing.T) {
	line := func(root string) string {
		return `I1207 21:54:10.123456   4242 hollow_kubelet.go:153] "Using ` + root + ` as root dir for hollow-kubelet"` + "\n"
	}
	for _, tc := range []struct {
		name    string
		logs    map[string]string // file: text, ROOT for the folder made
		removed bool
	}{
		{"its log", map[string]string{"n1.log": "ROOT"}, true},
		{"a restart's log", map[string]string{"n1.log": "", "n1.2.log": "ROOT"}, true},
		{"another actor's log", map[string]string{"n10.log": "ROOT"}, false},
		{"another actor's restart", map[string]string{"n1.x.log": "ROOT"}, false},
		{"not a log", map[string]string{"n1.txt": "ROOT"}, false},
		{"no such line", map[string]string{"n1.log": "-"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, err := os.MkdirTemp("/tmp", "hollow-kubelet.")
			assert.NilError(t, err)
			t.Cleanup(func() { _ = os.RemoveAll(root) })
			assert.NilError(t, os.Mkdir(filepath.Join(root, "pods"), 0o700))
			dir := t.TempDir()
			for file, text := range tc.logs {
				switch text {
				case "ROOT":
					text = line(root)
				case "-":
					text = line("/tmp/elsewhere.1") + `Using ` + root + ` as root dir` + "\n"
				}
				assert.NilError(t, os.WriteFile(filepath.Join(dir, file), []byte(text), 0o600))
			}
			got := removeKubeletRoots(dir, "n1")
			_, err = os.Stat(root)
			if tc.removed {
				assert.DeepEqual(t, got, []string{root})
				assert.Assert(t, os.IsNotExist(err), "still there: %v", err)
				return
			}
			assert.Equal(t, len(got), 0, "%v", got)
			assert.NilError(t, err)
		})
	}
}

// TestPodsMissing checks what scheduler and node say when their binary
// has not been built: where, and what to run.
func TestPodsMissing(t *testing.T) {
	tests := []struct {
		name, line, binary, target string
		find                       *func() (string, error)
	}{
		{"scheduler", "scheduler", "kube-scheduler", "scheduler", &findScheduler},
		{"node", "node n1", "kubemark", "kubemark", &findKubemark},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			was := *tc.find
			defer func() { *tc.find = was }()
			*tc.find = func() (string, error) {
				return "", fmt.Errorf("%w: %s is in none of [/nowhere]: run `make %s` to build it", assets.ErrMissing, tc.binary, tc.target)
			}
			file := filepath.Join(t.TempDir(), tc.name+"_missing.txtar")
			assert.NilError(t, os.WriteFile(file, []byte("# no binary\n"+tc.line+"\n"), 0o644))
			res := language.RunFiles(context.Background(), controlPlane(t), kcmLanguage(file))
			assert.Equal(t, len(res), 1)
			assert.Assert(t, !res[0].Passed)
			want := fmt.Sprintf("%s_missing.txtar:2: %s: control-plane binaries not found: %s is in none of [/nowhere]: run `make %s` to build it", tc.name, tc.line, tc.binary, tc.target)
			assert.Assert(t, strings.Contains(res[0].Log, want), "want %q in:\n%s", want, res[0].Log)
		})
	}
}
