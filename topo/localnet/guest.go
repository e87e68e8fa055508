package localnet

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"

	"github.com/nqos/nqos/internal/netns"
)

// GuestPlug plugs a guest NIC into a node's br-int.
type GuestPlug struct {
	Guest   string // guest name (AddGuest)
	Node    string
	IfaceID string // external_ids:iface-id = the LSP name
	MAC     string // MAC of the guest NIC (set when the NIC is first made)
	// NIC is the guest NIC (a bridge in the guest); default GuestBridge.
	NIC string
	// Standby pre-plugs the port (bound by OVN, carrier up) without
	// attaching it to the guest NIC; ActivatePlug attaches it, as a
	// migration target waits until the switch-over.
	Standby bool
	// MTURequest, if set, is the OVS mtu_request of the node-side port
	// (multi-chassis binding tunnels need headroom).
	MTURequest int
}

// GuestNetns is the namespace of a guest (on a KinD cluster: its launcher
// pod's, bound once the pod's NIC is plugged).
func (t *Testbed) GuestNetns(guest string) string { return t.cluster().guestNetns(guest) }

// AddGuest creates the guest's namespace.
func (t *Testbed) AddGuest(ctx context.Context, guest string) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if slices.Contains(t.st.Guests, guest) {
		return "", fmt.Errorf("testbed %s: guest %s exists", t.st.RunID, guest)
	}
	ns := t.GuestNetns(guest)
	t.st.Guests = append(t.st.Guests, guest)
	if err := t.cluster().addGuest(ns); err != nil {
		return "", err
	}
	return ns, nil
}

// PlugGuest connects the guest to a node: a veth whose node end is an
// OVS port of br-int with iface-id, and whose guest end is a port of the
// guest NIC bridge eth0 (created on the first plug with the MAC, keeping
// its neighbour cache across carrier loss).
func (t *Testbed) PlugGuest(ctx context.Context, p GuestPlug) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, ok := t.st.node(p.Node)
	if !ok {
		return fmt.Errorf("testbed %s: plug guest %s: no node %q", t.st.RunID, p.Guest, p.Node)
	}
	if !slices.Contains(t.st.Guests, p.Guest) {
		return fmt.Errorf("testbed %s: plug guest %s: no such guest", t.st.RunID, p.Guest)
	}
	if p.NIC == "" {
		p.NIC = t.GuestNIC(0)
	}
	if slices.ContainsFunc(t.st.Plugs, func(q plugState) bool { return q.Guest == p.Guest && q.Node == p.Node && q.NIC == p.NIC }) {
		return fmt.Errorf("testbed %s: guest %s NIC %s is already plugged into %s", t.st.RunID, p.Guest, p.NIC, p.Node)
	}
	return t.cluster().plugGuest(ctx, n, p)
}

// plugGuest plugs a veth into the node's br-int and the guest NIC.
func (c embeddedCluster) plugGuest(ctx context.Context, n Node, p GuestPlug) error {
	t := c.t
	gns := guestNetns(t.st.RunID, p.Guest)
	if err := t.ensureGuestNIC(gns, p.NIC, p.MAC); err != nil {
		return fmt.Errorf("testbed %s: guest %s: %w", t.st.RunID, p.Guest, err)
	}
	t.st.NextPlug++
	nodeIf, guestIf := guestLinkNames(t.st.RunID, t.st.NextPlug)
	if err := t.addVethPair(veth{a: nodeIf, aNetns: n.Netns, b: guestIf, bNetns: gns, mtu: t.st.Spec.FabricMTU}); err != nil {
		return err
	}
	if err := netns.Named(gns).Sysctl("net.ipv6.conf."+guestIf+".disable_ipv6", "1"); err != nil {
		return fmt.Errorf("testbed %s: guest %s: %w", t.st.RunID, p.Guest, err)
	}
	if !p.Standby {
		if err := withLinks(gns, func(c *netns.Conn) error { return c.SetMaster(guestIf, p.NIC) }); err != nil {
			return fmt.Errorf("testbed %s: guest %s: %w", t.st.RunID, p.Guest, err)
		}
	}
	args := []string{"add-port", integBridge, nodeIf, "--", "set", "Interface", nodeIf, "external_ids:iface-id=" + p.IfaceID}
	if p.MTURequest > 0 {
		args = append(args, "mtu_request="+strconv.Itoa(p.MTURequest))
	}
	if _, err := t.VSCtl(ctx, p.Node, args...); err != nil {
		return err
	}
	t.st.Plugs = append(t.st.Plugs, plugState{Guest: p.Guest, Node: p.Node, NIC: p.NIC, NodeIf: nodeIf, IfaceID: p.IfaceID,
		GuestIfc: guestIf, Active: !p.Standby})
	return t.st.save()
}

// ensureGuestNIC creates the guest NIC bridge unless it exists: no
// forward delay, no multicast snooping, neighbour entries kept when its
// ports lose carrier, no DAD.
func (t *Testbed) ensureGuestNIC(gns, nic, mac string) error {
	br := netns.Bridge{Name: nic, MTU: t.st.Spec.FabricMTU, NoSnooping: true}
	if mac != "" {
		hw, err := net.ParseMAC(mac)
		if err != nil {
			return fmt.Errorf("guest NIC %s: MAC %q: %w", nic, mac, err)
		}
		br.MAC = hw
	}
	return withLinks(gns, func(c *netns.Conn) error {
		if ok, err := c.Exists(nic); ok || err != nil {
			return err
		}
		if err := c.AddBridge(br); err != nil {
			return err
		}
		ns := netns.Named(gns)
		for _, kv := range [][2]string{
			{"net.ipv4.conf." + nic + ".arp_evict_nocarrier", "0"},
			{"net.ipv6.conf." + nic + ".ndisc_evict_nocarrier", "0"},
			{"net.ipv6.conf." + nic + ".accept_dad", "0"},
		} {
			if err := ns.Sysctl(kv[0], kv[1]); err != nil {
				return err
			}
		}
		return c.Up(nic)
	})
}

// UnplugGuest removes the port of a guest NIC ("" = GuestBridge) from a
// node (the guest NIC keeps its addresses and neighbour cache).
func (t *Testbed) UnplugGuest(ctx context.Context, guest, node, nic string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cluster().unplugGuest(ctx, guest, node, nic)
}

// ActivatePlug attaches a standby port to its guest NIC.
func (t *Testbed) ActivatePlug(ctx context.Context, guest, node, nic string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cluster().activatePlug(ctx, guest, node, nic)
}

func (t *Testbed) plugIndex(guest, node, nic string) (int, error) {
	if nic == "" {
		nic = GuestBridge
	}
	i := slices.IndexFunc(t.st.Plugs, func(p plugState) bool { return p.Guest == guest && p.Node == node && p.NIC == nic })
	if i < 0 {
		return 0, fmt.Errorf("testbed %s: guest %s NIC %s is not plugged into %s", t.st.RunID, guest, nic, node)
	}
	return i, nil
}

func (t *Testbed) unplugLocked(ctx context.Context, i int) error {
	p := t.st.Plugs[i]
	node, guest := p.Node, p.Guest
	if _, err := t.VSCtl(ctx, node, "--if-exists", "del-port", integBridge, p.NodeIf); err != nil {
		return err
	}
	n, _ := t.st.node(node)
	if err := withLinks(n.Netns, func(c *netns.Conn) error { return c.Delete(p.NodeIf) }); err != nil && !netns.IsNotFound(err) {
		return fmt.Errorf("testbed %s: unplug guest %s: %w", t.st.RunID, guest, err)
	}
	t.st.Plugs = slices.Delete(t.st.Plugs, i, i+1)
	return t.st.save()
}

// GuestNodes are the nodes a guest is plugged into.
func (t *Testbed) GuestNodes(guest string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, p := range t.st.Plugs {
		if p.Guest == guest {
			out = append(out, p.Node)
		}
	}
	return out
}

// RemoveGuest unplugs the guest everywhere, ends its processes and
// deletes its namespace.
func (t *Testbed) RemoveGuest(ctx context.Context, guest string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cluster().removeGuest(ctx, guest)
}
