package scenarios

import (
	"strings"
	"testing"
)

// routedBase is testdata/base.yaml with a router on blue, vm-a routing
// through it and flow "other" going to a host behind it.
func routedBase(t *testing.T) string {
	t.Helper()
	s := readBase(t)
	for _, r := range [][2]string{
		{"      addresses: {v4: 10.10.0.11/16}", "      addresses: {v4: 10.10.0.11/16}\n      routes: [{to: default, via: 10.10.0.1}]"},
		{"  hosts:\n", "  routers:\n    - {name: gw, network: blue, gateway: {v4: 10.10.0.1/16}, site: {v4: 10.20.0.1/16}}\n  hosts:\n    - {name: site-a, router: gw, addresses: {v4: 10.20.0.5/16}}\n"},
		{"    to: host-a\n    protocol: udp\n    rate: 10M", "    to: site-a\n    protocol: udp\n    rate: 10M"},
	} {
		if strings.Count(s, r[0]) != 1 {
			t.Fatalf("%q does not occur once in base.yaml", r[0])
		}
		s = strings.Replace(s, r[0], r[1], 1)
	}
	return s
}

func TestRoutedHost(t *testing.T) {
	base := routedBase(t)
	sc, err := Parse([]byte(base), "routed.yaml")
	if err != nil {
		t.Fatalf("routed base: %v", err)
	}
	if h := sc.Host("site-a"); h.Network != "blue" {
		t.Fatalf("site-a network %q, want its router's (blue)", h.Network)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"no-route", "      routes: [{to: default, via: 10.10.0.1}]\n", "", `flows[1].from: VM "vm-a" has no v4 route to 10.20.0.5 (host "site-a" behind router "gw")`},
		{"route-elsewhere", "routes: [{to: default, via: 10.10.0.1}]", "routes: [{to: default, via: 10.10.0.1}, {to: 10.20.0.0/24, via: 10.10.0.254}]", `has no v4 route to 10.20.0.5`},
		{"route-offlink", "via: 10.10.0.1}]", "via: 10.30.0.1}]", "topology.vms[0].routes[0].via: gateway 10.30.0.1 is not on-link"},
		{"route-bad-to", "to: default, via", "to: everywhere, via", `topology.vms[0].routes[0]: to "everywhere": want a prefix of the gateway's family, or default`},
		{"host-outside-site", "addresses: {v4: 10.20.0.5/16}", "addresses: {v4: 10.30.0.5/16}", `topology.hosts[0].addresses.v4: 10.30.0.5/16 is not in router "gw"'s site prefix "10.20.0.1/16"`},
		{"unknown-router", "router: gw,", "router: gx,", `topology.hosts[0].router: unknown router "gx"`},
		{"router-network", "{name: gw, network: blue", "{name: gw, network: red", `topology.routers[0].network: unknown network "red"`},
		{"host-other-network", "{name: site-a, router: gw,", "{name: site-a, network: red, router: gw,", `topology.hosts[0].network: host "site-a" is behind router "gw", which is on network "blue", not "red"`},
		{"router-bad-gateway", "gateway: {v4: 10.10.0.1/16}", "gateway: {v4: 10.10.0.1}", "topology.routers[0].gateway.v4: invalid v4 address"},
		{"router-no-gateway", "gateway: {v4: 10.10.0.1/16}", "gateway: {}", `topology.routers[0].gateway: router "gw" needs a gateway address`},
		{"host-no-network", "{name: host-a, network: blue,", "{name: host-a,", `topology.hosts[1].network: host "host-a" needs a network (or a router)`},
	} {
		if strings.Count(base, tc.old) != 1 {
			t.Fatalf("%s: %q does not occur once", tc.name, tc.old)
		}
		_, err := Parse([]byte(strings.Replace(base, tc.old, tc.new, 1)), tc.name+".yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestFlowNeedsPath: an iperf3 flow needs a path both ways; an address
// outside the other end's prefix (a /48 neighbour that is not in the
// /48) is refused at parse time, raw packets flows are not.
func TestFlowNeedsPath(t *testing.T) {
	base := readBase(t)
	for _, tc := range []struct{ name, old, new, want string }{
		{"dst-offlink", "addresses: {v4: 10.10.0.100/16}", "addresses: {v4: 10.30.0.100/16}",
			`flows[0].to: 10.30.0.100 of "host-a" is neither on-link for "vm-a" (10.10.0.11/16) nor covered by one of its routes`},
		{"src-offlink", "addresses: {v4: 10.10.0.100/16}", "addresses: {v4: 10.10.0.100/30}",
			`flows[0].from: 10.10.0.11 of "vm-a" is neither on-link for "host-a" (10.10.0.100/30) nor covered by one of its routes: the answers would not come back`},
		{"v6-outside-48", "ipFamilies: [v4]\n", "ipFamilies: [v6]\n",
			`flows[0].to: fd00:48:2::5 of "host-a" is neither on-link for "vm-a" (fd00:48::11/48)`},
	} {
		src := strings.Replace(base, tc.old, tc.new, 1)
		if tc.name == "v6-outside-48" {
			src = strings.NewReplacer("addresses: {v4: 10.10.0.11/16}", `addresses: {v6: "fd00:48::11/48"}`,
				"addresses: {v4: 10.10.0.100/16}", `addresses: {v6: "fd00:48:2::5/48"}`).Replace(src)
		}
		_, err := Parse([]byte(src), tc.name+".yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	packets := strings.Replace(strings.Replace(base, "addresses: {v4: 10.10.0.100/16}", "addresses: {v4: 10.30.0.100/16}", 1),
		"    protocol: udp\n    rate: 300M", "    protocol: udp\n    tool: packets\n    rate: 300M", 1)
	packets = strings.Replace(packets, "    protocol: udp\n    rate: 10M", "    protocol: udp\n    tool: packets\n    rate: 10M", 1)
	if _, err := Parse([]byte(packets), "packets.yaml"); err != nil && strings.Contains(err.Error(), "on-link") {
		t.Errorf("packets flows need no path back: %v", err)
	}
}
