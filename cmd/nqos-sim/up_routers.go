package main

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/nqos/nqos/topo/localnet"
)

// routedFabric derives the routers a manifest set declares through its
// VMs' cloud-init default gateways (gateway4, gateway6, a route to
// default): one router per network whose VMs route through a gateway,
// with the gateway addresses in the VMs' prefixes. The default hosts
// whose addresses are off-link for those VMs go behind it, on a site LAN
// of their own prefixes (the router at the prefix's first address), so
// the VMs reach them routed. VMs naming different gateways on one
// network are an error naming both.
func (d *manifestDir) routedFabric(nets []localnet.Network) ([]localnet.RouterSpec, []localnet.HostSpec, error) {
	hosts := localnet.DefaultHosts(nets[0])
	var routers []localnet.RouterSpec
	for _, n := range nets {
		r, err := d.gateway(n)
		if err != nil {
			return nil, nil, err
		}
		if r == nil {
			continue
		}
		r.Name = fmt.Sprintf("gw%d", len(routers)+1)
		for i := range hosts {
			routeHost(r, &hosts[i])
		}
		routers = append(routers, *r)
	}
	return routers, hosts, nil
}

// gateway is the router of network n the VMs' default routes name (nil
// when no VM on n names one).
func (d *manifestDir) gateway(n localnet.Network) (*localnet.RouterSpec, error) {
	var r *localnet.RouterSpec
	from := map[bool]string{} // family (v4) -> the VM that named the gateway
	for _, vm := range d.set.VMs {
		for _, nic := range vm.NICs {
			if !slices.Contains(n.NADs, nic.NAD) {
				continue
			}
			for _, rt := range nic.Routes {
				if rt.To.Bits() != 0 {
					continue
				}
				v4 := rt.Via.Is4()
				own := nic.IPv6
				if v4 {
					own = nic.IPv4
				}
				p, err := netip.ParsePrefix(own)
				if err != nil {
					return nil, fmt.Errorf("%s: gateway %s without a static address of its family", vm.Object.Ref(), rt.Via)
				}
				gw := netip.PrefixFrom(rt.Via, p.Bits()).String()
				if r == nil {
					r = &localnet.RouterSpec{Network: n.Name}
				}
				cur := &r.IPv6
				if v4 {
					cur = &r.IPv4
				}
				if *cur != "" && *cur != gw {
					return nil, fmt.Errorf("network %s: %s routes through %s, %s through %s: one gateway per network and family", n.Name, from[v4], *cur, vm.Object.Ref(), gw)
				}
				*cur, from[v4] = gw, vm.Object.Ref()
			}
		}
	}
	return r, nil
}

// routeHost puts a host of the router's network behind it when every
// address it has is off-link for the router's gateway prefixes (a DHCP
// server stays on the VLAN it serves).
func routeHost(r *localnet.RouterSpec, h *localnet.HostSpec) {
	if h.Network != r.Network || h.DHCPRange != "" || h.Router != "" {
		return
	}
	v4, ok4 := site(h.IPv4, r.IPv4, r.SiteIPv4)
	v6, ok6 := site(h.IPv6, r.IPv6, r.SiteIPv6)
	if !ok4 || !ok6 {
		return
	}
	h.Router, r.SiteIPv4, r.SiteIPv6 = r.Name, v4, v6
}

// site is the site prefix (router address included) a host address
// needs behind a router with that gateway and site so far; ok is false
// when the address is on-link for the gateway or outside the site.
func site(addr, gateway, cur string) (string, bool) {
	if addr == "" {
		return cur, true
	}
	a := netip.MustParsePrefix(addr)
	if g, err := netip.ParsePrefix(gateway); err == nil && g.Masked().Contains(a.Addr()) {
		return cur, false
	}
	if cur != "" {
		return cur, netip.MustParsePrefix(cur).Masked().Contains(a.Addr())
	}
	first := a.Masked().Addr().Next()
	if first == a.Addr() {
		first = first.Next()
	}
	return netip.PrefixFrom(first, a.Bits()).String(), true
}

// describeRouters prints each router with the hosts behind it.
func describeRouters(routers []localnet.RouterSpec, hosts []localnet.HostSpec) []string {
	var out []string
	for _, r := range routers {
		var behind []string
		for _, h := range hosts {
			if h.Router == r.Name {
				behind = append(behind, h.Name)
			}
		}
		out = append(out, fmt.Sprintf("router %s on %s: gateway %s (the VMs' cloud-init gateways), site %s: %s",
			r.Name, r.Network, strings.Join(nonEmpty(r.IPv4, r.IPv6), " "), strings.Join(nonEmpty(r.SiteIPv4, r.SiteIPv6), " "), strings.Join(behind, ", ")))
	}
	return out
}

func nonEmpty(s ...string) []string {
	return slices.DeleteFunc(s, func(x string) bool { return x == "" })
}
