package localnetenv

import (
	"fmt"
	"net/netip"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/scenarios"
)

var _ harness.Leaser = (*testbedEnv)(nil)

// Lease is the DHCP lease a running VM's guest holds on its NIC.
func (e *testbedEnv) Lease(vm *scenarios.VM) (netip.Prefix, error) {
	in, err := e.vms.Get(vm.Namespace, vm.Name)
	if err != nil {
		return netip.Prefix{}, err
	}
	if len(in.Leases) == 0 || in.Leases[0] == "" {
		return netip.Prefix{}, fmt.Errorf("VM %s/%s holds no DHCP lease", vm.Namespace, vm.Name)
	}
	return netip.ParsePrefix(in.Leases[0])
}
