package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/racekit/racekit/harness"
)

// crdFlag is the --crds of racekit run and explore: the CRDs a scenario's
// resources need, so that a controller written in any language (Python,
// Java, JavaScript) is raced from the command line with a txtar file
// alone, no Go test around it. Each --crds names a file or a folder of
// YAML or JSON, as racekit.Setup.CRDs reads them; give it once per path.
type crdFlag []string

const crdUsage = "install the CRDs in `PATH`, a file or a folder of YAML or JSON (a kubebuilder project's config/crd/bases), before the scenarios run; give --crds once per path"

func (f *crdFlag) String() string { return strings.Join(*f, ",") }

func (f *crdFlag) Set(path string) error {
	if path == "" {
		return fmt.Errorf("want a file or a folder of CRDs")
	}
	*f = append(*f, path)
	return nil
}

// read reads the CRDs the flag names, before any control plane starts:
// a path that does not exist, a file that does not parse and a path that
// holds no CRD are usage errors, each naming the path.
func (f crdFlag) read() ([]harness.CRD, error) {
	if len(f) == 0 {
		return nil, nil
	}
	crds, err := harness.ReadCRDs(f...)
	if err != nil {
		return nil, fmt.Errorf("--crds: %w", err)
	}
	return crds, nil
}

// install installs crds on cp, waiting until the API server serves them;
// a CRD it refuses, or one that differs from an installed CRD of its name
// (the reference controller's), is an error that names its file.
func install(ctx context.Context, cp *harness.ControlPlane, crds []harness.CRD) error {
	if len(crds) == 0 {
		return nil
	}
	if err := cp.InstallCRDs(ctx, crds); err != nil {
		return fmt.Errorf("--crds: %w", err)
	}
	return nil
}
