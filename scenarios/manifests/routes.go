package manifests

import (
	"fmt"
	"net/netip"
)

// Route is a static guest route from cloud-init: gateway4 and gateway6
// are default routes, routes[] entries name their destination.
type Route struct {
	To  netip.Prefix
	Via netip.Addr
}

// setRoutes reads an ethernet's gateway4, gateway6 and routes: each
// gateway must be of its family and on-link (inside one of the NIC's
// static prefixes, or any IPv4 one for a DHCP NIC, as the lease decides).
func setRoutes(o *Object, p string, n *NIC, eth networkEthernet) error {
	type entry struct{ field, to, via string }
	var es []entry
	if eth.Gateway4 != "" {
		es = append(es, entry{p + ".gateway4", "0.0.0.0/0", eth.Gateway4})
	}
	if eth.Gateway6 != "" {
		es = append(es, entry{p + ".gateway6", "::/0", eth.Gateway6})
	}
	for j, r := range eth.Routes {
		es = append(es, entry{fmt.Sprintf("%s.routes[%d]", p, j), r.To, r.Via})
	}
	for _, e := range es {
		r, err := parseRoute(e.to, e.via)
		if err != nil {
			return o.errf(e.field, "%v", err)
		}
		if !n.onLink(r.Via) {
			return o.errf(e.field, "gateway %s is not on-link: no address of %s is in its prefix", r.Via, n.GuestName())
		}
		n.Routes = append(n.Routes, r)
	}
	return nil
}

func parseRoute(to, via string) (Route, error) {
	if to == "default" {
		to = "0.0.0.0/0"
		if v, err := netip.ParseAddr(via); err == nil && v.Is6() {
			to = "::/0"
		}
	}
	dst, err := netip.ParsePrefix(to)
	if err != nil {
		return Route{}, fmt.Errorf("to %q: want a prefix (e.g. 10.20.0.0/16) or default", to)
	}
	gw, err := netip.ParseAddr(via)
	if err != nil {
		return Route{}, fmt.Errorf("via %q: want a gateway address", via)
	}
	if dst.Addr().Is4() != gw.Is4() {
		return Route{}, fmt.Errorf("to %s via %s: destination and gateway of different families", dst, gw)
	}
	return Route{To: dst.Masked(), Via: gw}, nil
}

// onLink reports whether gw is inside one of the NIC's prefixes.
func (n *NIC) onLink(gw netip.Addr) bool {
	for _, a := range []string{n.IPv4, n.IPv6} {
		if p, err := netip.ParsePrefix(a); err == nil && p.Masked().Contains(gw) {
			return true
		}
	}
	return gw.Is4() && n.DHCP
}
