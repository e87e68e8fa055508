package kubevirt

import (
	"net/netip"

	"github.com/nqos/nqos/internal/netns"
)

// addGuestAddrs adds CIDRs to a guest NIC (IPv6 without DAD).
func addGuestAddrs(ns, nic string, cidrs ...string) error {
	return netns.Named(ns).WithConn(func(c *netns.Conn) error { return c.AddCIDRs(nic, cidrs...) })
}

// flushGuestAddrs removes a guest NIC's global addresses.
func flushGuestAddrs(ns, nic string) error {
	return netns.Named(ns).WithConn(func(c *netns.Conn) error { return c.FlushAddrs(nic) })
}

// guestAddrs lists a guest NIC's global addresses.
func guestAddrs(ns, nic string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	err := netns.Named(ns).WithConn(func(c *netns.Conn) (err error) { out, err = c.Addrs(nic); return err })
	return out, err
}

// addGuestRoutes installs routes through a guest NIC, replacing any to
// the same destination.
func addGuestRoutes(ns, nic string, routes []Route) error {
	return netns.Named(ns).WithConn(func(c *netns.Conn) error {
		for _, r := range routes {
			if err := c.ReplaceRoute(r.Dst, r.Via, nic); err != nil {
				return err
			}
		}
		return nil
	})
}
