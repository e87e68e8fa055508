package cluster

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/nqos/nqos/tools/kind/internal/kindnode"
)

// conflistPath is the CNI config the stand-in writes on every node.
const conflistPath = "/etc/cni/net.d/10-nqos-bridge.conflist"

// conflist is a bridge network on podCIDR, followed by portmap and the
// chained plugins of chained (JSON objects), in order.
func conflist(podCIDR string, chained ...string) string {
	var more strings.Builder
	for _, c := range chained {
		more.WriteString(",\n    " + c)
	}
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "nqos-bridge",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}%s
  ]
}
`, podCIDR, more.String())
}

// setupCNI stands in for kindnetd: once every node has a podCIDR, each
// node gets a bridge conflist on its podCIDR, a masquerade for traffic
// leaving the pod subnet, and a route to every other node's podCIDR via
// that node's InternalIP.
func setupCNI(ctx context.Context, p *cluster.Provider, name string) error {
	cp, err := controlPlane(p, name)
	if err != nil {
		return err
	}
	want, err := p.ListNodes(name)
	if err != nil {
		return fmt.Errorf("list nodes of cluster %s: %w", name, err)
	}
	var ns []node
	err = poll(ctx, fmt.Sprintf("a podCIDR on all %d nodes of cluster %s", len(want), name), func() (bool, string, error) {
		got, err := listNodes(ctx, cp)
		if err != nil {
			return false, err.Error(), nil // the API server may still be starting
		}
		ns = got
		return len(got) == len(want) && allHaveCIDR(got), fmt.Sprintf("nodes: %v", got), nil
	})
	if err != nil {
		return err
	}
	byName := map[string]nodes.Node{}
	for _, n := range want {
		byName[n.String()] = n
	}
	for _, n := range ns {
		kn, ok := byName[n.name]
		if !ok {
			return fmt.Errorf("cluster %s: node %s has no container", name, n.name)
		}
		if err := configureNode(ctx, kn, n, ns); err != nil {
			return err
		}
	}
	return nil
}

func allHaveCIDR(ns []node) bool {
	for _, n := range ns {
		if n.podCIDR == "" || n.internal == "" {
			return false
		}
	}
	return true
}

// configureNode writes self's conflist and its routes to the other nodes.
func configureNode(ctx context.Context, kn nodes.Node, self node, all []node) error {
	if _, err := kindnode.Run(ctx, kn, strings.NewReader(conflist(self.podCIDR)),
		"sh", "-c", "mkdir -p /etc/cni/net.d && cat > "+conflistPath); err != nil {
		return fmt.Errorf("CNI config of node %s: %w", self.name, err)
	}
	masq := []string{"POSTROUTING", "-s", self.podCIDR, "!", "-d", PodSubnet, "-j", "MASQUERADE"}
	if _, err := kindnode.Run(ctx, kn, nil, append([]string{"iptables", "-t", "nat", "-C"}, masq...)...); err != nil {
		if _, err := kindnode.Run(ctx, kn, nil, append([]string{"iptables", "-t", "nat", "-A"}, masq...)...); err != nil {
			return fmt.Errorf("pod masquerade on node %s: %w", self.name, err)
		}
	}
	for _, o := range all {
		if o.name == self.name {
			continue
		}
		if _, err := kindnode.Run(ctx, kn, nil, "ip", "route", "replace", o.podCIDR, "via", o.internal); err != nil {
			return fmt.Errorf("route to pods of node %s on node %s: %w", o.name, self.name, err)
		}
	}
	return nil
}
