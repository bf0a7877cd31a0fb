package running

import (
	"os/exec"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/internal/reaper"
)

// spawnedTree is a spawned program with every process it starts, under a
// reaper of its own (internal/reaper): halt's SIGTERM reaches the
// program's process group, and a crash, restart's crash, the end of the
// program, and racekit's own end, however it ends, kill the whole tree,
// a child that left the group, double forked or called setsid included.
// Each spawn has its own reaper, so killing one spawn's tree never
// touches another's, in this scenario or in one running beside it.
type spawnedTree struct {
	tree    *reaper.Tree
	untrack func()
}

// startTree starts cmd under a reaper, and has the control plane kill its
// tree on an interrupt or at Stop until it is gone.
func startTree(sc *language.Scenario, cmd *exec.Cmd) (*spawnedTree, error) {
	tree, err := reaper.Start(cmd)
	if err != nil {
		return nil, err
	}
	return &spawnedTree{tree: tree, untrack: sc.ControlPlane().Track(tree.Kill)}, nil
}

// terminate sends SIGTERM to the program's process group.
func (t *spawnedTree) terminate() { t.tree.Terminate() }

// kill sends SIGKILL to every process of the tree.
func (t *spawnedTree) kill() { t.tree.Kill() }

// wait waits until the program has exited and the rest of its tree has
// been killed and reaped, and returns how the program ended.
func (t *spawnedTree) wait() error {
	err := t.tree.Wait()
	t.untrack()
	return err
}
