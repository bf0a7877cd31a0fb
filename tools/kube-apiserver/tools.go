//go:build tools

// Package tools pins the kube-apiserver main package so that go mod tidy keeps
// every module it needs. The Makefile builds it with
// go build k8s.io/kubernetes/cmd/kube-apiserver.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
