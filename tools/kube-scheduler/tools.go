//go:build tools

// Package tools pins the kube-scheduler main package so that go mod tidy
// keeps every module it needs. make scheduler builds it with go build
// k8s.io/kubernetes/cmd/kube-scheduler.
package tools

import _ "k8s.io/kubernetes/cmd/kube-scheduler"
