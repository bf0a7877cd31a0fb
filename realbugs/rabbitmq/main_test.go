package rabbitmq_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/racekit/racekit"
	"github.com/racekit/racekit/realbugs/rabbitmq"
)

// linkErr is why the releases could not be put on PATH: they have not
// been built (make operators). Every test fails with it.
var linkErr error

// TestMain puts a link to each built release on PATH, as the scenarios
// spawn them by name (rabbitmq-v1.6.0, ...), and lets racekit.Main stop the
// control plane when the tests end. The links live in the user cache,
// beside the releases.
func TestMain(m *testing.M) {
	cache, err := os.UserCacheDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin := filepath.Join(cache, "racekit", "operators", "bin")
	linkErr = rabbitmq.Link(bin)
	os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	racekit.Main(m)
}

// built fails t when the releases have not been built.
func built(t testing.TB) {
	t.Helper()
	if linkErr != nil {
		t.Fatal(linkErr)
	}
}

func setup(t testing.TB, dir string, r rabbitmq.Release) racekit.Setup {
	t.Helper()
	built(t)
	s, err := rabbitmq.Setup(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBugs(t *testing.T) {
	racekit.Run(t, setup(t, "testdata/bugs", rabbitmq.V160))
}

func TestGC(t *testing.T) {
	racekit.Run(t, setup(t, "testdata/gc", rabbitmq.V160))
}
