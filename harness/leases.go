package harness

import (
	"fmt"
	"net/netip"

	"github.com/nqos/nqos/scenarios"
)

// Leaser is implemented by environments whose VMs can take their IPv4
// address from DHCP: Lease is the VM's current lease (CIDR).
type Leaser interface {
	Lease(vm *scenarios.VM) (netip.Prefix, error)
}

// addresses are a VM's or host's addresses now: the IPv4 address a
// guestIP step gave the VM, or a DHCP VM's lease, read from the environment (and recorded in the world, so
// the intent sees it in the pod's pod-networks entry as the cluster does).
func (ex *execution) addresses(name string) (scenarios.Addresses, error) {
	vm := ex.sc.VM(name)
	if v4, ok := ex.guestV4[name]; ok { // a guestIP step changed it
		a := ex.peer(name)
		a.V4 = v4
		return a, nil
	}
	if vm == nil || !vm.DHCP {
		return ex.peer(name), nil
	}
	l, ok := ex.env.(Leaser)
	if !ok {
		return scenarios.Addresses{}, fmt.Errorf("VM %s uses DHCP but the environment reports no leases", name)
	}
	lease, err := l.Lease(vm)
	if err != nil {
		return scenarios.Addresses{}, fmt.Errorf("VM %s: DHCP lease: %w", name, err)
	}
	ex.world.SetLease(name, lease.String())
	a := vm.Addresses
	a.V4 = lease.String()
	return a, nil
}

// addressesOn are the addresses of a VM's NIC on network (a host's own
// addresses for a host): a VM's first NIC through addresses (its lease).
func (ex *execution) addressesOn(name, network string) (scenarios.Addresses, error) {
	vm := ex.sc.VM(name)
	if vm == nil || vm.Network == network {
		return ex.addresses(name)
	}
	_, nic, ok := vm.NIC(network)
	if !ok {
		return scenarios.Addresses{}, fmt.Errorf("VM %s has no NIC on network %s", name, network)
	}
	return nic.Addresses, nil
}

// runAddrs are the source and destination addresses of flow f in fam, on
// the network it crosses.
func (ex *execution) runAddrs(f *scenarios.Flow, fam scenarios.Family) (src, dst netip.Addr, err error) {
	network := ex.sc.FlowNetwork(f)
	from, err := ex.addressesOn(f.From, network)
	if err != nil {
		return src, dst, fmt.Errorf("flow %s: %w", f.Name, err)
	}
	to, err := ex.addressesOn(f.To, network)
	if err != nil {
		return src, dst, fmt.Errorf("flow %s: %w", f.Name, err)
	}
	if src, err = netip.ParseAddr(from.Address(fam)); err != nil {
		return src, dst, fmt.Errorf("flow %s: %s has no %s address", f.Name, f.From, fam)
	}
	if dst, err = netip.ParseAddr(to.Address(fam)); err != nil {
		return src, dst, fmt.Errorf("flow %s: %s has no %s address", f.Name, f.To, fam)
	}
	return src, dst, nil
}
