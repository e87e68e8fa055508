package localnet

import (
	"context"
	"fmt"
	"slices"

	"github.com/nqos/nqos/internal/netns"
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

// HostQueuePort is the fabric's port towards an external host as a
// queueing point: a link whose egress the kernel feeds, so an egress
// qdisc there drops what it cannot send without the sender noticing.
// The fabric switch's own port cannot be that link: OVS's userspace
// datapath sends through an AF_PACKET socket and, when the qdisc refuses
// a frame, drops the rest of its batch, whatever their class. So the
// first call splices a kernel hop in: the host's fabric-side veth end
// leaves the switch for a Linux bridge (no STP), and a new veth pair
// joins that bridge to the switch as the host's access port. Later calls
// return the same link.
func (t *Testbed) HostQueuePort(ctx context.Context, host string) (string, string, error) {
	i := slices.IndexFunc(t.st.Hosts, func(h Host) bool { return h.Name == host })
	if i < 0 {
		return "", "", fmt.Errorf("testbed %s: no host %q", t.st.RunID, host)
	}
	h := t.st.Hosts[i]
	_, fab := hostLinkNames(t.st.RunID, i+1) // hosts are numbered from 1 (boot)
	ns := fabricNetns(t.st.RunID)
	br, sw, brPort := fab+"b", fab+"o", fab+"i"
	var spliced bool
	err := withLinks(ns, func(c *netns.Conn) error {
		var err error
		spliced, err = c.Exists(br)
		return err
	})
	if err != nil {
		return "", "", fmt.Errorf("testbed %s: host %s queue port: %w", t.st.RunID, host, err)
	}
	if spliced {
		return ns, fab, nil
	}
	if _, err := t.VSCtl(ctx, FabricName, "del-port", fabricBridge(t.st.RunID), fab); err != nil {
		return "", "", err
	}
	err = withLinks(ns, func(c *netns.Conn) error {
		if err := c.AddBridge(netns.Bridge{Name: br, MTU: t.st.Spec.FabricMTU, NoSnooping: true}); err != nil {
			return err
		}
		if err := c.Up(br); err != nil {
			return err
		}
		return c.SetMaster(fab, br)
	})
	if err == nil {
		err = t.addVethPair(veth{a: sw, aNetns: ns, b: brPort, bNetns: ns, mtu: t.st.Spec.FabricMTU})
	}
	if err == nil {
		err = withLinks(ns, func(c *netns.Conn) error { return c.SetMaster(brPort, br) })
	}
	if err != nil {
		return "", "", fmt.Errorf("testbed %s: host %s queue port: %w", t.st.RunID, host, err)
	}
	if err := t.joinFabric(ctx, sw, h.VLAN); err != nil {
		return "", "", err
	}
	return ns, fab, nil
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
