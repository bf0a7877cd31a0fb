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
	"strings"
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

// Release is a Kubernetes release racekit races against: kube-apiserver
// (and kube-controller-manager) built from k8s.io/kubernetes at Kubernetes,
// beside etcd at Etcd, from the nested module tools/Module.
type Release struct {
	Kubernetes, Etcd string
	// Module is the folder under tools/ of the release's nested module,
	// which builds kube-apiserver and kube-controller-manager; empty for
	// the default release, whose binaries each have a module of their own
	// (tools/kube-apiserver, tools/kube-controller-manager).
	Module string
}

// Releases is the release matrix (make matrix), the default first. Every
// release runs on the same etcd, so that a difference the matrix shows is
// the API server's: kube-apiserver of each of these releases supports etcd
// 3.5 and later. k8s.io/kubernetes v1.34.x, v1.35.4 and v1.36.x are what
// the module proxy serves besides 1.37.2; the newest patch of each.
var Releases = []Release{
	{KubernetesVersion, EtcdVersion, ""},
	{"1.36.3", EtcdVersion, "releases/1.36.3"},
	{"1.35.4", EtcdVersion, "releases/1.35.4"},
	{"1.34.4", EtcdVersion, "releases/1.34.4"},
}

// ReleaseEnv selects the release of the process's control plane: a
// version of Releases, or empty for the default. racekit.Setup's
// Kubernetes and racekit's --kubernetes set it.
const ReleaseEnv = "RACEKIT_KUBERNETES"

// Selected returns the release ReleaseEnv names, or the default; a version
// that is not in the matrix is an error that lists those that are.
func Selected() (Release, error) { return ReleaseOf(os.Getenv(ReleaseEnv)) }

// ReleaseOf returns the release of version ("1.35.4", "v1.35.4" or "" for
// the default).
func ReleaseOf(version string) (Release, error) {
	v := strings.TrimPrefix(strings.TrimSpace(version), "v")
	if v == "" {
		return Releases[0], nil
	}
	var known []string
	for _, r := range Releases {
		if r.Kubernetes == v {
			return r, nil
		}
		known = append(known, r.Kubernetes)
	}
	return Release{}, fmt.Errorf("Kubernetes %s is not in racekit's release matrix (%w); pick one of %s (%s, racekit.Setup.Kubernetes or --kubernetes), or add its module under tools/releases",
		v, ErrUnknownRelease, strings.Join(known, ", "), ReleaseEnv)
}

// ErrUnknownRelease is returned, wrapped, for a release the matrix does not
// hold.
var ErrUnknownRelease = errors.New("an unknown release")

// Dir returns the versioned folder the selected release's binaries live
// in, under the user's cache folder, so that every clone of the repository
// shares them.
func Dir() (string, error) {
	rel, err := Selected()
	if err != nil {
		return "", err
	}
	return rel.Dir()
}

// Dir returns the folder of r's binaries.
func (r Release) Dir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find cache folder: %w", err)
	}
	return filepath.Join(cache, "racekit", "envtest", "kubernetes-"+r.Kubernetes+"-etcd-"+r.Etcd), nil
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
