//go:build tools

// Package kube pins the Kubernetes control-plane binaries (kube-apiserver,
// etcd) that nqos builds from source for its controller tests and testbed.
// It is a nested module so the project's own go.mod never imports
// k8s.io/kubernetes.
package kube

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
