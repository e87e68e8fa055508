package harness

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/nqos/nqos/scenarios"
)

var _ Leaser = (*simEnv)(nil)

// Lease hands a DHCP VM the first address of its network's DHCP range
// and records it in the sim's world, as the real environment publishes
// it in the launcher pod's pod-networks entry.
func (s *simEnv) Lease(vm *scenarios.VM) (netip.Prefix, error) {
	for _, h := range s.sc.Topology.Hosts {
		if h.Network != vm.Network || h.DHCPRange == "" {
			continue
		}
		first, _, _ := strings.Cut(h.DHCPRange, ",")
		p := netip.PrefixFrom(netip.MustParseAddr(first), netip.MustParsePrefix(h.Addresses.V4).Bits())
		s.mu.Lock()
		s.world.SetLease(vm.Name, p.String())
		s.mu.Unlock()
		return p, nil
	}
	return netip.Prefix{}, fmt.Errorf("VM %s: no DHCP server on network %s", vm.Name, vm.Network)
}
