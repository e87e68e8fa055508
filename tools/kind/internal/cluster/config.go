package cluster

import (
	"fmt"
	"strings"
)

// PodSubnet is the cluster's pod CIDR; each node gets a /24 of it.
const PodSubnet = "10.244.0.0/16"

// rawConfig renders the kind v1alpha4 config: one control plane and
// workers workers, no default CNI (kindnetd's image cannot be pulled
// offline), kubelet allowed on cgroup v1 (this machine's hierarchy), and
// the CoreDNS and kube-proxy addons skipped (their images are not built);
// the list replaces kind's own skipPhases, so it repeats kind's preflight.
func rawConfig(workers int) []byte {
	var b strings.Builder
	b.WriteString("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n")
	fmt.Fprintf(&b, "networking:\n  disableDefaultCNI: true\n  podSubnet: %s\n", PodSubnet)
	b.WriteString("nodes:\n- role: control-plane\n")
	for range workers {
		b.WriteString("- role: worker\n")
	}
	b.WriteString(`kubeadmConfigPatches:
- |
  kind: KubeletConfiguration
  failCgroupV1: false
- |
  kind: InitConfiguration
  skipPhases:
  - preflight
  - addon/coredns
  - addon/kube-proxy
`)
	return []byte(b.String())
}
