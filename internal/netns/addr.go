package netns

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// toAddr is a netlink address for p; IPv6 addresses skip duplicate address
// detection (nothing waits on DAD in a testbed).
func toAddr(p netip.Prefix) *netlink.Addr {
	a := &netlink.Addr{IPNet: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}}
	if p.Addr().Is6() {
		a.Flags = unix.IFA_F_NODAD
	}
	return a
}

// AddAddr adds an address to a link (EEXIST if it is there).
func (c *Conn) AddAddr(name string, p netip.Prefix) error {
	return c.with(name, "add address "+p.String(), func(l netlink.Link) error { return c.h.AddrAdd(l, toAddr(p)) })
}

// AddCIDRs adds addresses written as CIDRs ("10.0.0.1/24") to a link,
// each as AddAddr does.
func (c *Conn) AddCIDRs(name string, cidrs ...string) error {
	for _, s := range cidrs {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return fmt.Errorf("address %q of %s: %w", s, name, err)
		}
		if err := c.AddAddr(name, p); err != nil {
			return err
		}
	}
	return nil
}

// ReplaceAddr adds an address to a link or refreshes it if present.
func (c *Conn) ReplaceAddr(name string, p netip.Prefix) error {
	return c.with(name, "replace address "+p.String(), func(l netlink.Link) error { return c.h.AddrReplace(l, toAddr(p)) })
}

// Addrs lists a link's addresses of scope global, IPv4 then IPv6, in
// kernel order.
func (c *Conn) Addrs(name string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	err := c.with(name, "list addresses", func(l netlink.Link) error {
		as, err := c.h.AddrList(l, netlink.FAMILY_ALL)
		if err != nil {
			return err
		}
		for _, a := range as {
			if a.Scope != unix.RT_SCOPE_UNIVERSE {
				continue
			}
			ip, ok := netip.AddrFromSlice(a.IP)
			ones, _ := a.Mask.Size()
			if ok {
				out = append(out, netip.PrefixFrom(ip.Unmap(), ones))
			}
		}
		return nil
	})
	return out, err
}

// FlushAddrs removes every address of scope global from a link.
func (c *Conn) FlushAddrs(name string) error {
	return c.with(name, "flush addresses", func(l netlink.Link) error {
		as, err := c.h.AddrList(l, netlink.FAMILY_ALL)
		if err != nil {
			return err
		}
		for i := range as {
			if as[i].Scope != unix.RT_SCOPE_UNIVERSE {
				continue
			}
			if err := c.h.AddrDel(l, &as[i]); err != nil {
				return fmt.Errorf("delete %s: %w", as[i].IPNet, err)
			}
		}
		return nil
	})
}

// ReplaceRoute installs a route to dst via gw (invalid gw: on-link) out of
// dev, replacing one to the same destination.
func (c *Conn) ReplaceRoute(dst netip.Prefix, gw netip.Addr, dev string) error {
	return c.with(dev, "route "+dst.String(), func(l netlink.Link) error {
		r := &netlink.Route{LinkIndex: l.Attrs().Index,
			Dst: &net.IPNet{IP: dst.Addr().AsSlice(), Mask: net.CIDRMask(dst.Bits(), dst.Addr().BitLen())}}
		if gw.IsValid() {
			r.Gw = gw.AsSlice()
		} else {
			r.Scope = netlink.SCOPE_LINK
		}
		return c.h.RouteReplace(r)
	})
}

// NeighState is a neighbour entry's NUD state.
type NeighState int

// Neighbour states.
const (
	Permanent NeighState = netlink.NUD_PERMANENT
	Reachable NeighState = netlink.NUD_REACHABLE
)

// SetNeigh installs a neighbour entry ip → mac on dev in the given state
// (`ip neigh replace ... nud permanent|reachable`).
func (c *Conn) SetNeigh(dev string, ip netip.Addr, mac net.HardwareAddr, state NeighState) error {
	return c.with(dev, "neighbour "+ip.String(), func(l netlink.Link) error {
		return c.h.NeighSet(&netlink.Neigh{LinkIndex: l.Attrs().Index, Family: family(ip), State: int(state),
			IP: ip.AsSlice(), HardwareAddr: mac})
	})
}

// Neigh returns the MAC of the neighbour entry for ip on dev (nil if none).
func (c *Conn) Neigh(dev string, ip netip.Addr) (net.HardwareAddr, error) {
	var mac net.HardwareAddr
	err := c.with(dev, "neighbour "+ip.String(), func(l netlink.Link) error {
		ns, err := c.h.NeighList(l.Attrs().Index, family(ip))
		for _, n := range ns {
			if a, ok := netip.AddrFromSlice(n.IP); ok && a.Unmap() == ip {
				mac = n.HardwareAddr
			}
		}
		return err
	})
	return mac, err
}

// DelNeigh deletes the neighbour entry for ip on dev (`ip neigh del`); an
// entry that is not there is not an error.
func (c *Conn) DelNeigh(dev string, ip netip.Addr) error {
	return c.with(dev, "delete neighbour "+ip.String(), func(l netlink.Link) error {
		err := c.h.NeighDel(&netlink.Neigh{LinkIndex: l.Attrs().Index, Family: family(ip), IP: ip.AsSlice()})
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	})
}

func family(ip netip.Addr) int {
	if ip.Is6() {
		return netlink.FAMILY_V6
	}
	return netlink.FAMILY_V4
}
