package scenarios

import (
	"fmt"
	"net/netip"
	"strings"
)

// dhcp checks the DHCP servers and clients: a range lies in its host's
// IPv4 subnet, and every DHCP VM has a server on its network.
func (v *validator) dhcp() error {
	servers := map[string]bool{}
	for i := range v.sc.Topology.Hosts {
		h := &v.sc.Topology.Hosts[i]
		if h.DHCPRange == "" {
			continue
		}
		if err := dhcpRange(h); err != nil {
			return v.d.errAt(fmt.Sprintf("topology.hosts[%d].dhcpRange", i), "host %q: %v", h.Name, err)
		}
		servers[h.Network] = true
	}
	for i, vm := range v.sc.Topology.VMs {
		if vm.DHCP && !servers[vm.Network] {
			path := fmt.Sprintf("topology.vms[%d]", i)
			if vm.Manifest != "" {
				path = "manifests." + vm.Manifest
			}
			return v.d.errAt(path, "VM %q takes its IPv4 address from DHCP (no static address), but no host on network %q has a dhcpRange", vm.Name, vm.Network)
		}
	}
	return nil
}

func dhcpRange(h *Host) error {
	pfx, err := netip.ParsePrefix(h.Addresses.V4)
	if err != nil {
		return fmt.Errorf("a DHCP server needs an IPv4 address")
	}
	a, b, ok := strings.Cut(h.DHCPRange, ",")
	first, err1 := netip.ParseAddr(strings.TrimSpace(a))
	last, err2 := netip.ParseAddr(strings.TrimSpace(b))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return fmt.Errorf("%q: want \"first,last\" IPv4 addresses", h.DHCPRange)
	case !pfx.Contains(first) || !pfx.Contains(last):
		return fmt.Errorf("%q is not inside the host's subnet %s", h.DHCPRange, pfx.Masked())
	case last.Less(first):
		return fmt.Errorf("%q: last address before first", h.DHCPRange)
	case pfx.Addr().Compare(first) >= 0 && pfx.Addr().Compare(last) <= 0:
		return fmt.Errorf("%q contains the server's own address %s", h.DHCPRange, pfx.Addr())
	}
	return nil
}

// hasAddress reports whether a VM or host has an address of the family
// at run time: a DHCP VM's IPv4 address is its lease.
// nicAddress is hasAddress for a VM's NIC on network (a DHCP lease is
// only ever on the first NIC).
func (v *validator) nicAddress(name, network string, a Addresses, fam Family) bool {
	if vm, ok := v.vms[name]; ok && vm.Network != network {
		return a.Address(fam) != ""
	}
	return v.hasAddress(name, a, fam)
}

func (v *validator) hasAddress(name string, a Addresses, fam Family) bool {
	if vm, ok := v.vms[name]; ok && vm.DHCP && fam == V4 {
		return true
	}
	return a.Address(fam) != ""
}
