//go:build tools

// Package tools pins the etcd main package so that go mod tidy keeps every
// module it needs. The builder runs go build go.etcd.io/etcd/server/v3.
package tools

import _ "go.etcd.io/etcd/server/v3"
