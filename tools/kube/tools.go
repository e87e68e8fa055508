//go:build tools

// Package kube pins the Kubernetes binaries nqos builds from source: the
// control plane (kube-apiserver, etcd) for its controller tests and
// testbed, and kubectl for users of `nqos-sim up`.
// It is a nested module so the project's own go.mod never imports
// k8s.io/kubernetes.
package kube

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
