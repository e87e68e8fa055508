package cluster

import (
	"context"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/nqos/nqos/tools/kind/internal/kindnode"
)

// node is one kind node as the API server sees it.
type node struct {
	name     string // also the container name
	podCIDR  string
	internal string // InternalIP
}

// controlPlane returns the cluster's (first) control-plane node.
func controlPlane(p *cluster.Provider, name string) (nodes.Node, error) {
	cp, _, err := kindnode.List(p, name)
	return cp, err
}

// kubectl runs kubectl with the admin kubeconfig inside the control plane.
func kubectl(ctx context.Context, cp nodes.Node, args ...string) (string, error) {
	return kindnode.Run(ctx, cp, nil, append([]string{"kubectl", "--kubeconfig=/etc/kubernetes/admin.conf"}, args...)...)
}

// listNodes reads every node's name, podCIDR and InternalIP.
func listNodes(ctx context.Context, cp nodes.Node) ([]node, error) {
	out, err := kubectl(ctx, cp, "get", "nodes", "-o",
		`jsonpath={range .items[*]}{.metadata.name} {.spec.podCIDR} {.status.addresses[?(@.type=="InternalIP")].address}{"\n"}{end}`)
	if err != nil {
		return nil, err
	}
	var ns []node
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		n := node{}
		if len(f) > 0 {
			n.name = f[0]
		}
		if len(f) == 3 {
			n.podCIDR, n.internal = f[1], f[2]
		}
		if n.name != "" {
			ns = append(ns, n)
		}
	}
	return ns, nil
}
