// Package assets finds, and when asked builds, the kube-apiserver and etcd
// binaries that envtest runs. No download is involved: both are built from
// their Go modules, through the nested modules under tools/.
//
// The versions below are the one place they are pinned. tools/kube-apiserver
// and tools/etcd require the same versions; TestVersionsMatchToolModules and
// Build itself refuse to go on when they differ.
package assets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The control-plane versions.
const (
	KubernetesVersion = "1.37.2"
	EtcdVersion       = "3.7.0"
)

// EnvVar is the variable envtest and setup-envtest use. When it is set, its
// folder wins over the built one.
const EnvVar = "KUBEBUILDER_ASSETS"

// Binaries are the files a folder of assets must hold.
var Binaries = []string{"kube-apiserver", "etcd"}

// ErrMissing is returned, wrapped, when the binaries are not where they
// should be.
var ErrMissing = errors.New("control-plane binaries not found")

// Dir returns the versioned folder the built binaries live in, under the
// user's cache folder, so that every clone of the repository shares them.
func Dir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find cache folder: %w", err)
	}
	return filepath.Join(cache, "racekit", "envtest", "kubernetes-"+KubernetesVersion+"-etcd-"+EtcdVersion), nil
}

// Find returns the folder to hand envtest: $KUBEBUILDER_ASSETS when set,
// otherwise the built folder. It fails with ErrMissing, and a message that
// says what to run, when a binary is absent.
func Find() (string, error) {
	dir, from := os.Getenv(EnvVar), EnvVar
	if dir == "" {
		var err error
		if dir, err = Dir(); err != nil {
			return "", err
		}
		from = "the racekit cache"
	}
	if missing := missingIn(dir); len(missing) > 0 {
		hint := "run `make envtest` to build them (the first build takes several minutes)"
		if from == EnvVar {
			hint = "point " + EnvVar + " at a folder with both, or unset it and run `make envtest`"
		}
		return "", fmt.Errorf("%w: %v missing in %s (from %s): %s", ErrMissing, missing, dir, from, hint)
	}
	return dir, nil
}

func missingIn(dir string) []string { return missingFiles(dir, Binaries...) }

// missingFiles returns the names among binaries that are no executable
// file in dir.
func missingFiles(dir string, binaries ...string) []string {
	var missing []string
	for _, b := range binaries {
		if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			missing = append(missing, b)
		}
	}
	return missing
}
