//go:build tools

// Package ovnkube pins the OVN-Kubernetes ovnkube binary the KinD
// clusters run in their control plane (hack/kind/ovnkube.sh builds it):
// its localnet secondary-network controller creates the launcher pods'
// LSPs there. It is a nested module so the project's own go.mod never
// imports the go-controller; the replace directives are the
// go-controller's own.
package ovnkube

import _ "github.com/ovn-org/ovn-kubernetes/go-controller/cmd/ovnkube"
