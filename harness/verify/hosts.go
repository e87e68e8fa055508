package verify

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	"github.com/nqos/nqos/scenarios"
)

// hostSet are the external destination hosts of the probes: on each VM's
// network, host i holds the i-th IPv4 and the i-th IPv6 destination.
type hostSet struct {
	sc    *scenarios.Scenario
	order []string                   // networks in first-use order
	addrs map[string][2][]netip.Addr // network -> v4, v6 destinations
	names map[string]map[netip.Addr]string
}

func newHostSet(sc *scenarios.Scenario) *hostSet {
	return &hostSet{sc: sc, addrs: map[string][2][]netip.Addr{}, names: map[string]map[netip.Addr]string{}}
}

// host is the name of the host holding dst on vm's network.
func (h *hostSet) host(vm *scenarios.VM, dst netip.Addr) string {
	net := vm.Network
	if h.names[net] == nil {
		h.names[net] = map[netip.Addr]string{}
		h.order = append(h.order, net)
	}
	ni := slices.Index(h.order, net) + 1
	if n, ok := h.names[net][dst]; ok {
		return n
	}
	fams := h.addrs[net]
	f := 0
	if dst.Is6() {
		f = 1
	}
	fams[f] = append(fams[f], dst)
	h.addrs[net] = fams
	n := fmt.Sprintf("dst-%d-%d", ni, len(fams[f]))
	h.names[net][dst] = n
	return n
}

// list is the topology's hosts; each address gets the prefix length of
// the VM subnet it falls in, else a host route's.
func (h *hostSet) list() []map[string]any {
	var out []map[string]any
	for ni, net := range h.order {
		fams := h.addrs[net]
		for i := 0; i < max(len(fams[0]), len(fams[1])); i++ {
			addrs := map[string]string{}
			if i < len(fams[0]) {
				addrs["v4"] = h.cidr(net, fams[0][i])
			}
			if i < len(fams[1]) {
				addrs["v6"] = h.cidr(net, fams[1][i])
			}
			out = append(out, map[string]any{"name": "dst-" + strconv.Itoa(ni+1) + "-" + strconv.Itoa(i+1), "network": net, "addresses": addrs})
		}
	}
	return out
}

// cidr gives a destination the prefix of the first VM subnet of the
// network holding it.
func (h *hostSet) cidr(net string, a netip.Addr) string {
	for _, v := range h.sc.Topology.VMs {
		if v.Network != net {
			continue
		}
		for _, s := range []string{v.Addresses.V4, v.Addresses.V6} {
			if p, err := netip.ParsePrefix(s); err == nil && p.Masked().Contains(a) {
				return netip.PrefixFrom(a, p.Bits()).String()
			}
		}
	}
	return netip.PrefixFrom(a, a.BitLen()).String()
}
