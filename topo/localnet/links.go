package localnet

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/nqos/nqos/internal/netns"
)

// veth describes a veth pair whose ends are created directly in their
// namespaces with explicit, distinct ifindexes. Every end has TX checksum
// offload turned off and is set up.
type veth struct {
	a, b           string
	aNetns, bNetns string
	mtu            int
}

// addNetns creates a network namespace with loopback up; an existing
// namespace of that name is an error.
func addNetns(name string) error {
	_, err := netns.Create(name)
	return err
}

// addVeth creates the pair with ifindexes idx and idx+1.
func addVeth(v veth, idx int) error {
	a := netns.VethEnd{NS: netns.Named(v.aNetns), Name: v.a, Index: idx, MTU: v.mtu}
	b := netns.VethEnd{NS: netns.Named(v.bNetns), Name: v.b, Index: idx + 1, MTU: v.mtu}
	if err := netns.AddVeth(a, b); err != nil {
		return err
	}
	for _, end := range []netns.VethEnd{a, b} {
		if err := readyEnd(end.NS, end.Name); err != nil {
			return fmt.Errorf("veth %s/%s: %w", v.a, v.b, err)
		}
	}
	return nil
}

// readyEnd turns TX checksum offload off on a veth end and sets it up.
func readyEnd(ns netns.NS, name string) error {
	if err := ns.TxChecksumOff(name); err != nil {
		return err
	}
	return withLinks(ns.Name(), func(c *netns.Conn) error { return c.Up(name) })
}

// withLinks runs op on an rtnetlink connection into namespace ns.
func withLinks(ns string, op func(*netns.Conn) error) error { return netns.Named(ns).WithConn(op) }

// SetNeighbour installs a permanent neighbour entry ip → mac on dev
// inside namespace ns ("" = root).
func (t *Testbed) SetNeighbour(ns, dev string, ip netip.Addr, mac net.HardwareAddr) error {
	err := withLinks(ns, func(c *netns.Conn) error { return c.SetNeigh(dev, ip, mac, netns.Permanent) })
	if err != nil {
		return fmt.Errorf("testbed %s: %w", t.st.RunID, err)
	}
	return nil
}

// LinkMAC is the hardware address of link dev inside namespace ns.
func (t *Testbed) LinkMAC(ns, dev string) (net.HardwareAddr, error) {
	attrs, err := netns.Named(ns).LinkAttrs(dev)
	if err != nil {
		return nil, fmt.Errorf("testbed %s: %w", t.st.RunID, err)
	}
	return attrs.HardwareAddr, nil
}
