package localnet

import (
	"context"
	"fmt"
	"slices"
)

// trustCookie marks the fabric flows of trust boundaries, so removing
// them leaves the bridge's own NORMAL flow alone.
const trustCookie = "0x7e57"

// UplinkNodeSide is the node side of a node's uplink: the link whose
// egress carries everything the node sends into the fabric.
func (t *Testbed) UplinkNodeSide(node string) (netns, ifname string, err error) {
	n, ok := t.st.node(node)
	if !ok {
		return "", "", fmt.Errorf("testbed %s: no node %q", t.st.RunID, node)
	}
	return n.Netns, n.UplinkIf, nil
}

// HostFabricPort is the fabric's port towards an external host: its
// egress carries everything the fabric delivers to the host.
func (t *Testbed) HostFabricPort(host string) (netns, ifname string, err error) {
	i := slices.IndexFunc(t.st.Hosts, func(h Host) bool { return h.Name == host })
	if i < 0 {
		return "", "", fmt.Errorf("testbed %s: no host %q", t.st.RunID, host)
	}
	_, fab := hostLinkNames(t.st.RunID, i)
	return fabricNetns(t.st.RunID), fab, nil
}

// SetTrustBoundary makes the fabric an untrusted edge for a node's
// uplink (on) or trusting again (off): every IPv4 and IPv6 packet
// entering the fabric from that uplink has its DSCP rewritten to 0
// (ECN kept) before the fabric switches it, as a switch port that does
// not trust its neighbour's marks does.
func (t *Testbed) SetTrustBoundary(ctx context.Context, node string, on bool) error {
	n, ok := t.st.node(node)
	if !ok {
		return fmt.Errorf("testbed %s: no node %q", t.st.RunID, node)
	}
	br := fabricBridge(t.st.RunID)
	if !on {
		_, err := t.fabricOFCtl(ctx, "del-flows", br, "cookie="+trustCookie+"/-1,in_port="+n.FabricIf)
		return err
	}
	for _, proto := range []string{"ip", "ipv6"} {
		flow := fmt.Sprintf("cookie=%s,priority=100,in_port=%s,%s,actions=mod_nw_tos:0,NORMAL", trustCookie, n.FabricIf, proto)
		if _, err := t.fabricOFCtl(ctx, "add-flow", br, flow); err != nil {
			return err
		}
	}
	return nil
}

// fabricOFCtl runs ovs-ofctl against the fabric switch.
func (t *Testbed) fabricOFCtl(ctx context.Context, args ...string) (string, error) {
	f := t.st.Fabric
	out, err := t.run.run(ctx, f.Netns, nodeEnv(f), append([]string{"ovs-ofctl"}, args...)...)
	if err != nil {
		return out, fmt.Errorf("testbed %s: fabric: %w", t.st.RunID, err)
	}
	return out, nil
}
