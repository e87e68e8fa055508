package localnet

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/nqos/nqos/internal/netns"
)

// RouterSpec is a router on the fabric: a namespace with an access port
// of its network's VLAN carrying the gateway addresses the VMs route
// through, and a site LAN (a bridge) carrying the routed subnets of the
// hosts behind it (HostSpec.Router). It forwards IPv4 and IPv6.
type RouterSpec struct {
	Name    string
	Network string
	// IPv4 and IPv6 are the gateway addresses on the network (CIDRs).
	IPv4, IPv6 string
	// SiteIPv4 and SiteIPv6 are the router's addresses on the site LAN
	// (CIDRs): the routed prefixes the hosts behind it live in.
	SiteIPv4, SiteIPv6 string
}

// Router is a started router.
type Router struct {
	Name    string `json:"name"`
	Netns   string `json:"netns"`
	Ifname  string `json:"ifname"` // the VLAN-side port (its MAC is the gateway's)
	Network string `json:"network"`
	VLAN    int    `json:"vlan"`
}

// siteBridge is the site LAN bridge inside a router's namespace.
const siteBridge = "site"

func routerNetns(runID, name string) string { return NetnsPrefix(runID) + "rt-" + name }

// routerLinkNames are the router-side and fabric-side names of router i's
// VLAN port.
func routerLinkNames(runID string, i int) (routerSide, fabricSide string) {
	return fmt.Sprintf("nq%sr%d", runID, i), fmt.Sprintf("nq%sr%df", runID, i)
}

// startRouter creates router i: namespace with forwarding on, VLAN port
// with the gateway addresses, site bridge with the site addresses.
func (t *Testbed) startRouter(ctx context.Context, i int, rs RouterSpec) (Router, error) {
	n, _ := t.st.Spec.network(rs.Network)
	rIf, fabIf := routerLinkNames(t.st.RunID, i)
	r := Router{Name: rs.Name, Netns: routerNetns(t.st.RunID, rs.Name), Ifname: rIf, Network: n.Name, VLAN: n.VLAN}
	if err := t.addNetns(r.Netns); err != nil {
		return r, err
	}
	ns := netns.Named(r.Netns)
	for _, k := range []string{"net.ipv4.ip_forward", "net.ipv6.conf.all.forwarding"} {
		if err := ns.Sysctl(k, "1"); err != nil {
			return r, fmt.Errorf("testbed %s: router %s: %w", t.st.RunID, r.Name, err)
		}
	}
	v := veth{a: rIf, aNetns: r.Netns, b: fabIf, bNetns: fabricNetns(t.st.RunID), mtu: t.st.Spec.FabricMTU}
	if err := t.addVethPair(v); err != nil {
		return r, err
	}
	if err := t.joinFabric(ctx, fabIf, n.VLAN); err != nil {
		return r, err
	}
	gw, site := t.st.Spec.familyAddrs(rs.IPv4, rs.IPv6), t.st.Spec.familyAddrs(rs.SiteIPv4, rs.SiteIPv6)
	if err := addAddrs(r.Netns, rIf, gw); err != nil {
		return r, fmt.Errorf("testbed %s: router %s: %w", t.st.RunID, r.Name, err)
	}
	err := withLinks(r.Netns, func(c *netns.Conn) error {
		if err := c.AddBridge(netns.Bridge{Name: siteBridge, MTU: t.st.Spec.FabricMTU, NoSnooping: true}); err != nil {
			return err
		}
		return c.Up(siteBridge)
	})
	if err == nil {
		err = addAddrs(r.Netns, siteBridge, site)
	}
	if err != nil {
		return r, fmt.Errorf("testbed %s: router %s: %w", t.st.RunID, r.Name, err)
	}
	return r, nil
}

// attachRouted links a host's NIC to its router's site LAN and routes
// everything else through the router's site address of each family the
// host has an address of.
func (t *Testbed) attachRouted(h Host, hostIf, routerIf string, rs RouterSpec) error {
	v := veth{a: hostIf, aNetns: h.Netns, b: routerIf, bNetns: routerNetns(t.st.RunID, rs.Name), mtu: t.st.Spec.FabricMTU}
	if err := t.addVethPair(v); err != nil {
		return err
	}
	err := withLinks(v.bNetns, func(c *netns.Conn) error { return c.SetMaster(routerIf, siteBridge) })
	if err == nil {
		err = addAddrs(h.Netns, hostIf, h.Addrs)
	}
	for _, gw := range t.st.Spec.familyAddrs(rs.SiteIPv4, rs.SiteIPv6) {
		via := netip.MustParsePrefix(gw).Addr()
		if err != nil || (via.Is4() && h.IPv4 == "") || (via.Is6() && h.IPv6 == "") {
			continue // a family the host has no address of gets no route
		}
		err = defaultRoute(h.Netns, hostIf, via)
	}
	if err != nil {
		return fmt.Errorf("testbed %s: host %s behind router %s: %w", t.st.RunID, h.Name, rs.Name, err)
	}
	return nil
}

// defaultRoute routes the family of gw through gw out of dev.
func defaultRoute(ns, dev string, gw netip.Addr) error {
	dst := netip.MustParsePrefix("0.0.0.0/0")
	if gw.Is6() {
		dst = netip.MustParsePrefix("::/0")
	}
	return withLinks(ns, func(c *netns.Conn) error { return c.ReplaceRoute(dst, gw, dev) })
}

// Routers are the started routers.
func (t *Testbed) Routers() []Router { return append([]Router(nil), t.st.Routers...) }

// Router returns a router by name.
func (t *Testbed) Router(name string) (Router, bool) {
	return byName(t.st.Routers, name, func(x Router) string { return x.Name })
}

func (s Spec) router(name string) (RouterSpec, bool) {
	return byName(s.Routers, name, func(x RouterSpec) string { return x.Name })
}

// familyAddrs are the CIDRs among v4, v6 in the spec's families.
func (s Spec) familyAddrs(v4, v6 string) []string {
	var out []string
	if s.IPFamily.HasV4() && v4 != "" {
		out = append(out, v4)
	}
	if s.IPFamily.HasV6() && v6 != "" {
		out = append(out, v6)
	}
	return out
}

// validateRouters checks names, networks and addresses of the routers
// and that every routed host lies in its router's site prefixes.
func (s Spec) validateRouters() error {
	seen := map[string]bool{}
	for i, r := range s.Routers {
		if r.Name == "" || seen[r.Name] || len(r.Name) > 40 {
			return fmt.Errorf("testbed %s: spec.Routers[%d].Name %q: empty, too long or duplicate", s.RunID, i, r.Name)
		}
		seen[r.Name] = true
		if _, ok := s.network(r.Network); !ok {
			return fmt.Errorf("testbed %s: router %s: network %q is not in spec.Networks", s.RunID, r.Name, r.Network)
		}
		for field, cidr := range map[string]string{"IPv4": r.IPv4, "IPv6": r.IPv6, "SiteIPv4": r.SiteIPv4, "SiteIPv6": r.SiteIPv6} {
			if _, err := parseCIDR(cidr, field == "IPv4" || field == "SiteIPv4"); err != nil {
				return fmt.Errorf("testbed %s: router %s: %s: %w", s.RunID, r.Name, field, err)
			}
		}
	}
	for _, h := range s.Hosts {
		if h.Router == "" {
			continue
		}
		r, ok := s.router(h.Router)
		if !ok {
			return fmt.Errorf("testbed %s: host %s: router %q is not in spec.Routers", s.RunID, h.Name, h.Router)
		}
		if h.Network != r.Network || h.DHCPRange != "" {
			return fmt.Errorf("testbed %s: host %s behind router %s: want network %q (the router's) and no DHCPRange", s.RunID, h.Name, r.Name, r.Network)
		}
		for _, c := range [][2]string{{h.IPv4, r.SiteIPv4}, {h.IPv6, r.SiteIPv6}} {
			if c[0] == "" {
				continue
			}
			if c[1] == "" || !netip.MustParsePrefix(c[1]).Masked().Contains(netip.MustParsePrefix(c[0]).Addr()) {
				return fmt.Errorf("testbed %s: host %s: address %s is not in router %s's site prefix %q", s.RunID, h.Name, c[0], r.Name, c[1])
			}
		}
	}
	return nil
}

// parseCIDR parses an optional CIDR of the given family.
func parseCIDR(cidr string, v4 bool) (netip.Prefix, error) {
	if cidr == "" {
		return netip.Prefix{}, nil
	}
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return p, fmt.Errorf("%q: %w", cidr, err)
	}
	if p.Addr().Is4() != v4 {
		return p, fmt.Errorf("%q: wrong address family", cidr)
	}
	return p, nil
}
