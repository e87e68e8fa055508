package localnetenv

import (
	"fmt"
	"net/netip"
	"slices"

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

var _ harness.Assigner = (*testbedEnv)(nil)

// Assigned are the addresses a running VM's pod got on network (one
// with subnets): those the VM's NIC there was configured with, which the
// kubevirt manager took from the LSPs' writer (ovnkube's allocation on a
// cluster running it, the scenario's static addresses on the embedded
// testbed).
func (e *testbedEnv) Assigned(vm *scenarios.VM, network string) (scenarios.Addresses, error) {
	in, err := e.vms.Get(vm.Namespace, vm.Name)
	if err != nil {
		return scenarios.Addresses{}, err
	}
	i := slices.Index(in.Networks, network)
	if i < 0 {
		return scenarios.Addresses{}, fmt.Errorf("VM %s/%s has no NIC on network %s", vm.Namespace, vm.Name, network)
	}
	ifc := in.VM.Interfaces[i]
	if ifc.IPv4 == "" && ifc.IPv6 == "" {
		return scenarios.Addresses{}, fmt.Errorf("VM %s/%s: NIC on network %s has no address", vm.Namespace, vm.Name, network)
	}
	return scenarios.Addresses{V4: ifc.IPv4, V6: ifc.IPv6}, nil
}
