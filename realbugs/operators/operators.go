// Package operators builds the published operators racekit races in
// realbugs, unmodified, from their Go modules at released versions, into the
// user's cache, and finds them there for the tests.
//
// An operator is never built from a copy of its code in this repository: the
// Go module proxy serves its module at the release, `go mod download` puts
// it in the module cache, and `go build .` at its root, in a writable copy,
// makes the binary. The CRDs come from the same module, so that the binary
// and its API agree.
package operators

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Operator is one release of a published operator.
type Operator struct {
	// Name is how scenarios and messages name it, such as rabbitmq.
	Name string
	// Module and Version are the Go module and its release.
	Module, Version string
	// CRDs is the folder of the module that holds its CRDs.
	CRDs string
}

// Release names o as name@version.
func (o Operator) Release() string { return o.Name + "@" + o.Version }

// The rabbitmq cluster-operator releases realbugs races: v1.6.0 has #648,
// #758 and #782 (it is the release Sieve's commit 4f13b9a belongs to);
// v1.7.0 fixes #648; v1.10.0 is the first release the module proxy serves
// that fixes #782 (v1.9.0, which fixed it, is refused). No release changes
// #758's behaviour.
var (
	RabbitMQ160  = Operator{"rabbitmq", "github.com/rabbitmq/cluster-operator", "v1.6.0", "config/crd/bases"}
	RabbitMQ170  = Operator{"rabbitmq", "github.com/rabbitmq/cluster-operator", "v1.7.0", "config/crd/bases"}
	RabbitMQ1100 = Operator{"rabbitmq", "github.com/rabbitmq/cluster-operator", "v1.10.0", "config/crd/bases"}
)

// All lists every release make operators builds.
var All = []Operator{RabbitMQ160, RabbitMQ170, RabbitMQ1100}

// ErrMissing is returned, wrapped, when a release has not been built.
var ErrMissing = errors.New("operator not built")

// Dir returns the folder o's binary and CRDs live in, under the user's cache
// folder, so that every clone of the repository shares them.
func (o Operator) Dir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find cache folder: %w", err)
	}
	return filepath.Join(cache, "racekit", "operators", strings.ReplaceAll(o.Module, "/", "_")+"@"+o.Version), nil
}

// Built is a release as Build left it: its binary and its CRD folder.
type Built struct {
	Binary, CRDs string
}

// Find returns the built release, or ErrMissing with what to run.
func (o Operator) Find() (Built, error) {
	dir, err := o.Dir()
	if err != nil {
		return Built{}, err
	}
	b := Built{Binary: filepath.Join(dir, "manager"), CRDs: filepath.Join(dir, "crd")}
	if fi, err := os.Stat(b.Binary); err != nil || fi.Mode()&0o111 == 0 {
		return Built{}, fmt.Errorf("%w: %s %s is not in %s: run `make operators` to build it from its module (a few minutes the first time)", ErrMissing, o.Module, o.Version, dir)
	}
	if _, err := os.Stat(b.CRDs); err != nil {
		return Built{}, fmt.Errorf("%w: the CRDs of %s %s are not in %s: run `make operators`", ErrMissing, o.Module, o.Version, b.CRDs)
	}
	return b, nil
}

// Build downloads o's module from the module proxy, builds it at its root in
// a writable copy, and installs the binary and the CRDs into o.Dir; it does
// nothing when they are there. Progress goes to w.
func (o Operator) Build(ctx context.Context, w io.Writer) (Built, error) {
	if b, err := o.Find(); err == nil {
		fmt.Fprintf(w, "operators: %s %s is ready in %s\n", o.Module, o.Version, filepath.Dir(b.Binary))
		return b, nil
	}
	dir, err := o.Dir()
	if err != nil {
		return Built{}, err
	}
	start := time.Now()
	src, err := o.download(ctx)
	if err != nil {
		return Built{}, err
	}
	work, err := os.MkdirTemp("", "racekit-operator-")
	if err != nil {
		return Built{}, err
	}
	defer os.RemoveAll(work)
	copyDir := filepath.Join(work, "src")
	if err := copyTree(src, copyDir); err != nil {
		return Built{}, fmt.Errorf("copy %s: %w", src, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Built{}, fmt.Errorf("create %s: %w", dir, err)
	}
	fmt.Fprintf(w, "operators: go build %s %s\n", o.Module, o.Version)
	// Build into a temporary name and rename, so that an interrupted build
	// never leaves a binary that Find would accept.
	tmp := filepath.Join(dir, ".manager.tmp")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", tmp, ".")
	cmd.Dir = copyDir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOTOOLCHAIN=local")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		return Built{}, fmt.Errorf("build %s %s: %w\n%s", o.Module, o.Version, err, out.String())
	}
	crds := filepath.Join(dir, "crd")
	if err := os.RemoveAll(crds); err != nil {
		return Built{}, err
	}
	if err := copyTree(filepath.Join(src, o.CRDs), crds); err != nil {
		return Built{}, fmt.Errorf("copy the CRDs of %s %s: %w", o.Module, o.Version, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "manager")); err != nil {
		return Built{}, fmt.Errorf("install %s: %w", o.Release(), err)
	}
	fmt.Fprintf(w, "operators: built %s %s in %s\n", o.Module, o.Version, time.Since(start).Round(time.Second))
	return o.Find()
}

// download fetches o's module into the module cache and returns its folder.
// The checksum database is not asked for this module (GONOSUMDB): here it
// did not answer for some of its releases; the module proxy's zip is still
// checked against the hash go.sum files would record.
func (o Operator) download(ctx context.Context) (string, error) {
	tmp, err := os.MkdirTemp("", "racekit-download-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", o.Module+"@"+o.Version)
	cmd.Dir = tmp // outside any module
	nosum := o.Module
	if v := os.Getenv("GONOSUMDB"); v != "" {
		nosum = v + "," + o.Module
	}
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GONOSUMDB="+nosum, "GOTOOLCHAIN=local")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	data, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(data, &info); jerr == nil && info.Error != "" {
		return "", fmt.Errorf("download %s@%s: %s", o.Module, o.Version, info.Error)
	}
	if err != nil {
		return "", fmt.Errorf("download %s@%s: %w\n%s", o.Module, o.Version, err, stderr.String())
	}
	if info.Dir == "" {
		return "", fmt.Errorf("download %s@%s: go mod download named no folder", o.Module, o.Version)
	}
	return info.Dir, nil
}

// copyTree copies the regular files and folders under src to dst, writable,
// as the module cache's read-only copy is not.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
