package scenarios

import (
	"fmt"
	"net/netip"
)

// Router is a routed hop on the fabric: an access port of its network's
// VLAN carrying the gateway addresses VMs route through, and a site LAN
// carrying the routed prefixes of the hosts behind it (Host.Router).
type Router struct {
	Name    string    `yaml:"name,required"`
	Network string    `yaml:"network,required"`
	Gateway Addresses `yaml:"gateway,required"`
	Site    Addresses `yaml:"site,required"`
}

// Route is a static guest route: To (a prefix, or default) through Via.
type Route struct {
	To  string `yaml:"to,required"`
	Via string `yaml:"via,required"`
}

// Router returns the router named name, or nil.
func (sc *Scenario) Router(name string) *Router {
	return named(sc.Topology.Routers, name, func(r *Router) string { return r.Name })
}

// routers checks the routers and gives each routed host its router's
// network; it runs before the endpoints are checked.
func (v *validator) routers() error {
	t := &v.sc.Topology
	seen := map[string]bool{}
	for i, r := range t.Routers {
		path := fmt.Sprintf("topology.routers[%d]", i)
		switch {
		case !idRE.MatchString(r.Name):
			return v.d.errAt(path+".name", "invalid name %q (want lower-case letters, digits and -)", r.Name)
		case seen[r.Name]:
			return v.d.errAt(path+".name", "duplicate router %q", r.Name)
		case v.networks[r.Network] == nil:
			return v.d.errAt(path+".network", "unknown network %q", r.Network)
		}
		seen[r.Name] = true
		for _, a := range []struct {
			field string
			addrs Addresses
		}{{"gateway", r.Gateway}, {"site", r.Site}} {
			if err := v.addresses(path+"."+a.field, a.addrs); err != nil {
				return err
			}
		}
		if r.Gateway.V4 == "" && r.Gateway.V6 == "" {
			return v.d.errAt(path+".gateway", "router %q needs a gateway address", r.Name)
		}
	}
	for i := range t.Hosts {
		if err := v.routedHost(&t.Hosts[i], fmt.Sprintf("topology.hosts[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

// routedHost fills a routed host's network and checks its addresses lie
// in its router's site prefixes.
func (v *validator) routedHost(h *Host, path string) error {
	if h.Router == "" {
		if h.Network == "" {
			return v.d.errAt(path+".network", "host %q needs a network (or a router)", h.Name)
		}
		return nil
	}
	r := v.sc.Router(h.Router)
	switch {
	case r == nil:
		return v.d.errAt(path+".router", "unknown router %q", h.Router)
	case h.Network != "" && h.Network != r.Network:
		return v.d.errAt(path+".network", "host %q is behind router %q, which is on network %q, not %q", h.Name, r.Name, r.Network, h.Network)
	case h.DHCPRange != "":
		return v.d.errAt(path+".dhcpRange", "host %q is behind a router: DHCP serves its own VLAN only", h.Name)
	}
	h.Network = r.Network
	for _, c := range [][3]string{{"v4", h.Addresses.V4, r.Site.V4}, {"v6", h.Addresses.V6, r.Site.V6}} {
		if c[1] == "" {
			continue
		}
		a, err := netip.ParsePrefix(c[1])
		if err != nil {
			return nil // endpoints reports it
		}
		site, err := netip.ParsePrefix(c[2])
		if err != nil || !site.Masked().Contains(a.Addr()) {
			return v.d.errAt(path+".addresses."+c[0], "%s is not in router %q's site prefix %q", c[1], r.Name, c[2])
		}
	}
	return nil
}

// addresses checks optional CIDRs of the right family.
func (v *validator) addresses(path string, a Addresses) error {
	for _, f := range []struct {
		field, value string
		v4           bool
	}{{"v4", a.V4, true}, {"v6", a.V6, false}} {
		if f.value == "" {
			continue
		}
		p, err := netip.ParsePrefix(f.value)
		if err != nil || p.Addr().Is4() != f.v4 {
			return v.d.errAt(path+"."+f.field, "invalid %s address %q (want an address with prefix length, e.g. 10.10.0.11/8 or fd00:10::11/64)", f.field, f.value)
		}
	}
	return nil
}

// vmRoutes checks a VM's routes: a prefix (or default) through a
// gateway of its family inside one of the NIC's prefixes.
func (v *validator) vmRoutes(path string, a Addresses, dhcp bool, routes []Route) error {
	for i, r := range routes {
		p := fmt.Sprintf("%s.routes[%d]", path, i)
		_, via, err := r.Parse()
		if err != nil {
			return v.d.errAt(p, "%v", err)
		}
		if !onLink(a, dhcp, via) {
			return v.d.errAt(p+".via", "gateway %s is not on-link (in no prefix of the NIC's addresses)", via)
		}
	}
	return nil
}

// Parse is the route's destination prefix (default: the gateway's
// family's) and gateway.
func (r Route) Parse() (netip.Prefix, netip.Addr, error) {
	via, err := netip.ParseAddr(r.Via)
	if err != nil {
		return netip.Prefix{}, via, fmt.Errorf("via %q: want a gateway address", r.Via)
	}
	to := r.To
	if to == "default" {
		to = "0.0.0.0/0"
		if via.Is6() {
			to = "::/0"
		}
	}
	dst, err := netip.ParsePrefix(to)
	if err != nil || dst.Addr().Is4() != via.Is4() {
		return dst, via, fmt.Errorf("to %q: want a prefix of the gateway's family, or default", r.To)
	}
	return dst.Masked(), via, nil
}

func onLink(a Addresses, dhcp bool, gw netip.Addr) bool {
	for _, s := range []string{a.V4, a.V6} {
		if p, err := netip.ParsePrefix(s); err == nil && p.Masked().Contains(gw) {
			return true
		}
	}
	return gw.Is4() && dhcp
}

// reach checks that an iperf3 flow (which needs answers) has a path
// both ways in every family it runs in: the destination is on-link for
// the sending NIC (its prefix holds the address) or covered by one of
// its routes, and the sender is on-link or routed for the destination.
// A host behind a router is reached through the most specific route,
// which must go through the router's gateway address, and answers
// through the router, whose gateway prefix must hold the sender. DHCP
// addresses, known only at run time, are not checked.
func (v *validator) reach(f *Flow, path, network string, from NIC, fams []Family) error {
	if f.Tool == ToolPackets {
		return nil // raw frames need no answer and no route
	}
	var to NIC
	var r *Router
	if h := v.hosts[f.To]; h != nil {
		to, r = NIC{Addresses: h.Addresses}, v.sc.Router(h.Router)
	} else {
		_, to, _ = v.vms[f.To].NIC(network)
	}
	for _, fam := range fams {
		src, dst := from.Addresses.Address(fam), to.Addresses.Address(fam)
		if src == "" || dst == "" {
			continue
		}
		s, d := netip.MustParseAddr(src), netip.MustParseAddr(dst)
		if r != nil {
			if err := v.routedReach(f, path, r, from, s, d, fam); err != nil {
				return err
			}
			continue
		}
		if !reaches(from, d) {
			return v.d.errAt(path+".to", "%s of %q is neither on-link for %q (%s) nor covered by one of its routes: iperf3 needs a path both ways",
				dst, f.To, f.From, from.Addresses.cidr(fam))
		}
		if !reaches(to, s) {
			return v.d.errAt(path+".from", "%s of %q is neither on-link for %q (%s) nor covered by one of its routes: the answers would not come back",
				src, f.From, f.To, to.Addresses.cidr(fam))
		}
	}
	return nil
}

// routedReach checks the path to a host behind router r.
func (v *validator) routedReach(f *Flow, path string, r *Router, from NIC, s, d netip.Addr, fam Family) error {
	gw := r.Gateway.Address(fam)
	if gw == "" {
		return v.d.errAt(path+".to", "host %q is behind router %q, which has no %s gateway address", f.To, r.Name, fam)
	}
	via := netip.MustParseAddr(gw)
	if !routes(from.Routes, d, via) {
		return v.d.errAt(path+".from", "VM %q has no %s route to %s (host %q behind router %q): give it a gateway or a route covering the host via %s",
			f.From, fam, d, f.To, r.Name, via)
	}
	if !reaches(NIC{Addresses: r.Gateway}, s) {
		return v.d.errAt(path+".from", "%s of %q is not in router %q's gateway prefix %s: the answers would not come back", s, f.From, r.Name, r.Gateway.cidr(fam))
	}
	return nil
}

// reaches reports whether a NIC has a path to a: on-link or routed.
func reaches(n NIC, a netip.Addr) bool {
	for _, c := range []string{n.Addresses.V4, n.Addresses.V6} {
		if p, err := netip.ParsePrefix(c); err == nil && p.Masked().Contains(a) {
			return true
		}
	}
	for _, r := range n.Routes {
		if p, _, err := r.Parse(); err == nil && p.Contains(a) {
			return true
		}
	}
	return false
}

// cidr is the address of family f with its prefix length.
func (a Addresses) cidr(f Family) string {
	if f == V6 {
		return a.V6
	}
	return a.V4
}

// routes reports whether the most specific route covering dst goes
// through gw.
func routes(rs []Route, dst, gw netip.Addr) bool {
	best, via := -1, netip.Addr{}
	for _, r := range rs {
		p, a, err := r.Parse()
		if err == nil && p.Contains(dst) && p.Bits() > best {
			best, via = p.Bits(), a
		}
	}
	return best >= 0 && via == gw
}
