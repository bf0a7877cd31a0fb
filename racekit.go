// Package racekit makes Kubernetes optimistic-concurrency races happen on
// purpose, deterministically, against a real kube-apiserver.
//
// This root package only carries the files that every part of racekit needs
// at run time, embedded so that the racekit binary works outside a checkout:
// the CRDs the control plane installs. See the harness package for the
// scenario engine and the hooks package for the hook points.
package racekit

import "embed"

// CRDs holds testdata/crds/*.yaml, the CustomResourceDefinitions installed
// into every control plane racekit starts.
//
//go:embed testdata/crds/*.yaml
var CRDs embed.FS
