package floor_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/racekit/racekit"

	"github.com/racekit/racekit/examples/floor"
)

// TestMain builds the controller's own binary, as its users would run it,
// and puts it on PATH for the scenarios that spawn it; racekit.Main stops
// the control plane when the tests end. The binary is built with the race
// detector when the tests are, so that it shares their compiled packages.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "floor-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	args := []string{"build", "-o", filepath.Join(dir, "floor")}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "./cmd/floor")...)
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the floor controller: %v\n%s", err, out)
		os.Exit(1)
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	defer os.RemoveAll(dir)
	racekit.Main(m)
}

// TestRunning races the replica-floor controller as it runs on its own:
// once in this process (start floor), once as its own process through
// racekit's racing proxy (spawn controller -- floor). Its code knows
// nothing of racekit.
func TestRunning(t *testing.T) {
	racekit.Run(t, racekit.Setup{
		Dir: "testdata/running",
		Controllers: []*racekit.Controller{
			racekit.Runner("floor", clientgoscheme.Scheme, &appsv1.Deployment{},
				func(ctx context.Context, cfg *rest.Config, namespace string) error {
					return floor.Run(ctx, cfg, namespace, 1)
				}),
		},
	})
}
