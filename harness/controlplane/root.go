package controlplane

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/racekit/racekit/internal/watchdog"
)

// A control plane keeps what it writes under one root folder, so that
// whoever finds its processes orphaned can remove it all: etcd's data in
// ROOT/etcd and the API server's certificates in ROOT/kube-apiserver.
// envtest also writes webhook serving certificates into a folder of its own
// in the temporary directory, which it cannot be told to put elsewhere;
// ROOT/elsewhere names it.
//
// The root is made by the control plane's watchdog (internal/watchdog), a
// process that outlives the one that started the control plane only to
// kill what runs from the root and remove it, should that process die
// without stopping it: no root exists before its watchdog does.
//
// ROOT/owner holds the pid of the process that started the control plane
// and of its parent: a fuzzing coordinator removes the roots its workers
// left when both they and their watchdogs died (AdoptOrphans).
const (
	rootPrefix    = "racekit-controlplane-"
	elsewhereFile = watchdog.ElsewhereFile
	ownerFile     = "owner"
)

// newRoot starts a control plane's watchdog, which makes the root, and
// creates the folders envtest expects inside it.
func newRoot() (*watchdog.Watchdog, error) {
	wd, err := watchdog.Start(os.TempDir(), rootPrefix)
	if err != nil {
		return nil, fmt.Errorf("control plane folder: %w", err)
	}
	root := wd.Root()
	fail := func(err error) (*watchdog.Watchdog, error) {
		return nil, errors.Join(fmt.Errorf("control plane folder: %w", err), wd.Stop(false)) // it removes the root
	}
	for _, d := range []string{"etcd", "kube-apiserver"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o700); err != nil {
			return fail(err)
		}
	}
	owner := fmt.Sprintf("%d %d\n", os.Getpid(), os.Getppid())
	if err := os.WriteFile(filepath.Join(root, ownerFile), []byte(owner), 0o600); err != nil {
		return fail(err)
	}
	return wd, nil
}

// childRootsLeft returns the control-plane roots in the temporary
// directory that a child of this process made and left: their maker is
// gone, and this process was its parent.
func childRootsLeft() []string {
	roots, _ := filepath.Glob(filepath.Join(os.TempDir(), rootPrefix+"*"))
	var out []string
	for _, root := range roots {
		b, err := os.ReadFile(filepath.Join(root, ownerFile))
		if err != nil {
			continue
		}
		var pid, ppid int
		if _, err := fmt.Sscan(string(b), &pid, &ppid); err != nil || ppid != os.Getpid() {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			out = append(out, root)
		}
	}
	return out
}

// noteServingCertDir records, in the root, the folder envtest made for the
// webhook serving certificates.
func (cp *ControlPlane) noteServingCertDir() {
	if dir := cp.env.WebhookInstallOptions.LocalServingCertDir; dir != "" {
		_ = os.WriteFile(filepath.Join(cp.root, elsewhereFile), []byte(dir), 0o600)
	}
}

// removeRoot removes a control plane's root, found from a folder of one of
// its processes, and the folder its elsewhere file names. It refuses a
// folder that is not inside a control plane's root, so that a stray process
// cannot make it remove something else.
func removeRoot(processDir string) error {
	root := filepath.Dir(processDir)
	if !strings.HasPrefix(filepath.Base(root), rootPrefix) {
		return fmt.Errorf("%s is not in a racekit control plane's folder", processDir)
	}
	return watchdog.RemoveRoot(root)
}
