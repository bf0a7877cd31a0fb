package scenarios

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// racekitOnPath puts a racekit binary on PATH for the scenarios that spawn
// it (racekit controller, the reference controller's production main) and
// returns a function that removes what it built. make test has built one
// already, in $RACEKIT_LEAK_BIN (tools/leak-bins); without it, this builds
// one, with the race detector when the tests have it, so that it shares
// their compiled packages.
func racekitOnPath() (func(), error) {
	dir := os.Getenv("RACEKIT_LEAK_BIN")
	cleanup := func() {}
	if _, err := os.Stat(filepath.Join(dir, "racekit")); dir == "" || err != nil {
		tmp, err := os.MkdirTemp("", "racekit-bin-")
		if err != nil {
			return nil, err
		}
		args := []string{"build", "-o", filepath.Join(tmp, "racekit")}
		if raceEnabled {
			args = append(args, "-race")
		}
		out, err := exec.Command("go", append(args, "../cmd/racekit")...).CombinedOutput()
		if err != nil {
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("build racekit for the scenarios that spawn it: %w\n%s", err, out)
		}
		dir, cleanup = tmp, func() { os.RemoveAll(tmp) }
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return cleanup, nil
}
