package localnet

import (
	"context"
	"fmt"
	"strings"
)

// Who creates the launcher pods' LSPs on a KinD cluster, as `nqos-kind up
// -lsp` recorded it in the ConfigMap kube-system/nqos-kind (key lsp).
const (
	// KindLSPOVNKube: OVN-Kubernetes' ovnkube runs in the control-plane
	// node and creates the networks' localnet switches and ports and the
	// pods' LSPs; the testbed creates none and waits for them.
	KindLSPOVNKube = "ovnkube"
	// KindLSPEmulated: the testbed creates them as ovnkube would.
	KindLSPEmulated = "emulated"

	kindModeConfigMap = "nqos-kind"
	kindModeNamespace = "kube-system"
	// kindOVNKubePidfile is where ovnkube's pidfile is in the control
	// plane (tools/kind's ovn/ovnkube.sh).
	kindOVNKubePidfile = "/run/ovn-kubernetes/ovnkube.pid"
)

// discoverTopology reads the cluster's topology from its ConfigMap (key
// topology); none is Central (a cluster made before the key existed).
func (k KindCluster) discoverTopology(ctx context.Context) (Topology, error) {
	out, err := k.docker(ctx, "exec", k.Nodes[0].Name, "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf",
		"get", "configmap", "-n", kindModeNamespace, kindModeConfigMap, "--ignore-not-found", "-o", "jsonpath={.data.topology}")
	if err != nil {
		return "", fmt.Errorf("KinD cluster %s: ConfigMap %s/%s: %w", k.Name, kindModeNamespace, kindModeConfigMap, err)
	}
	v := strings.TrimSpace(out)
	if v == "" {
		return Central, nil
	}
	t, err := ParseTopology(v)
	if err != nil {
		return "", fmt.Errorf("KinD cluster %s: ConfigMap %s/%s key topology: %w", k.Name, kindModeNamespace, kindModeConfigMap, err)
	}
	return t, nil
}

// discoverLSPMode reads the cluster's LSP mode from its ConfigMap and,
// for ovnkube, checks that ovnkube runs in the control-plane node. A
// cluster without the ConfigMap (made before the mode existed) or with an
// unknown mode is an error: the testbed must not guess who makes LSPs.
func (k KindCluster) discoverLSPMode(ctx context.Context) (string, error) {
	cp := k.Nodes[0].Name
	out, err := k.docker(ctx, "exec", cp, "kubectl", "--kubeconfig=/etc/kubernetes/admin.conf",
		"get", "configmap", "-n", kindModeNamespace, kindModeConfigMap, "--ignore-not-found", "-o", "jsonpath={.data.lsp}")
	if err != nil {
		return "", fmt.Errorf("KinD cluster %s: ConfigMap %s/%s: %w", k.Name, kindModeNamespace, kindModeConfigMap, err)
	}
	mode := strings.TrimSpace(out)
	switch mode {
	case KindLSPEmulated:
		return mode, nil
	case KindLSPOVNKube:
		sh := `kill -0 "$(cat ` + kindOVNKubePidfile + `)"`
		if _, err := k.docker(ctx, "exec", cp, "sh", "-c", sh); err != nil {
			return "", fmt.Errorf("KinD cluster %s: LSP mode ovnkube, but ovnkube does not run in node %s: %w", k.Name, cp, err)
		}
		return mode, nil
	case "":
		return "", fmt.Errorf("KinD cluster %s: no LSP mode (ConfigMap %s/%s key lsp): recreate it with make kind-up", k.Name, kindModeNamespace, kindModeConfigMap)
	default:
		return "", fmt.Errorf("KinD cluster %s: LSP mode %q in ConfigMap %s/%s: want %s or %s", k.Name, mode, kindModeNamespace, kindModeConfigMap, KindLSPOVNKube, KindLSPEmulated)
	}
}
