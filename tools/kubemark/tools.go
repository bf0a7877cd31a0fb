//go:build tools

// Package tools pins kubemark's main package, the hollow node, so that go
// mod tidy keeps every module it needs. make kubemark builds it with go
// build k8s.io/kubernetes/cmd/kubemark.
package tools

import _ "k8s.io/kubernetes/cmd/kubemark"
