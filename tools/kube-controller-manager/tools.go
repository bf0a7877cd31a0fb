//go:build tools

// Package tools pins the kube-controller-manager main package so that go mod
// tidy keeps every module it needs. make controller-manager builds it with
// go build k8s.io/kubernetes/cmd/kube-controller-manager.
package tools

import _ "k8s.io/kubernetes/cmd/kube-controller-manager"
