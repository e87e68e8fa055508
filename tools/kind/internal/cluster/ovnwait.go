package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nqos/nqos/tools/kind/internal/kindnode"
)

// waitChassis polls until the southbound database on central lists every
// node as a chassis and every node's br-int exists with datapath_type
// netdev.
func waitChassis(ctx context.Context, central *ovnNode, ns []ovnNode) error {
	return poll(ctx, fmt.Sprintf("%d OVN chassis with a netdev br-int", len(ns)), func() (bool, string, error) {
		out, err := kindnode.Run(ctx, central.kn, nil, "ovn-sbctl", "--timeout=5", "--bare", "--columns=name", "list", "Chassis")
		if err != nil {
			return false, err.Error(), nil
		}
		chassis := strings.Fields(out)
		for _, n := range ns {
			if !slices.Contains(chassis, n.name) {
				return false, fmt.Sprintf("chassis %v, node %s missing", chassis, n.name), nil
			}
			dp, err := kindnode.Run(ctx, n.kn, nil, "ovs-vsctl", "--timeout=5", "get", "Bridge", "br-int", "datapath_type")
			if err != nil {
				return false, fmt.Sprintf("node %s: %v", n.name, err), nil
			}
			if got := strings.Trim(strings.TrimSpace(dp), `"`); got != "netdev" {
				return false, fmt.Sprintf("node %s: br-int datapath_type %q", n.name, got), nil
			}
		}
		return true, "", nil
	})
}
