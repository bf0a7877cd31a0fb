//go:build tools

// Package tools pins the main packages of kube-apiserver and
// kube-controller-manager so that go mod tidy keeps every module they need.
// internal/assets builds each with go build -trimpath.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
