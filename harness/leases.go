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

// Assigner is implemented by environments that report the addresses a
// VM's pod got on a network with subnets (its k8s.ovn.org/pod-networks
// entry, written by the cluster's IPAM or by the testbed from the
// scenario's addresses): Assigned is the VM's NIC's on network.
type Assigner interface {
	Assigned(vm *scenarios.VM, network string) (scenarios.Addresses, error)
}

// addresses are a VM's or host's addresses now: the IPv4 address a
// guestIP step gave the VM, a DHCP VM's lease, or on a network with
// subnets the addresses its pod got, read from the environment (and
// recorded in the world, so the intent sees them in the pod's
// pod-networks entry as the cluster does).
func (ex *execution) addresses(name string) (scenarios.Addresses, error) {
	vm := ex.sc.VM(name)
	if v4, ok := ex.guestV4[name]; ok { // a guestIP step changed it
		a := ex.peer(name)
		a.V4 = v4
		return a, nil
	}
	if vm != nil && ex.subnets(vm.Network) {
		return ex.assigned(vm, vm.Network)
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
	if ex.subnets(network) {
		return ex.assigned(vm, network)
	}
	return nic.Addresses, nil
}

// subnets reports whether the topology network allocates from subnets.
func (ex *execution) subnets(network string) bool {
	for _, n := range ex.sc.Topology.Networks {
		if n.Name == network {
			return n.IPAM == scenarios.IPAMSubnets
		}
	}
	return false
}

// assigned are the addresses VM vm's pod got on network, read from the
// environment; those of its first NIC are recorded in the world.
func (ex *execution) assigned(vm *scenarios.VM, network string) (scenarios.Addresses, error) {
	as, ok := ex.env.(Assigner)
	if !ok {
		return scenarios.Addresses{}, fmt.Errorf("VM %s is on network %s with subnets but the environment reports no assigned addresses", vm.Name, network)
	}
	a, err := as.Assigned(vm, network)
	if err != nil {
		return scenarios.Addresses{}, fmt.Errorf("VM %s: addresses on network %s: %w", vm.Name, network, err)
	}
	if err := ex.hostClash(vm.Name, network, a); err != nil {
		return scenarios.Addresses{}, err
	}
	if network == vm.Network {
		ex.world.SetAssigned(vm.Name, a)
	}
	return a, nil
}

// hostClash fails when an address VM vm's pod got on network is an
// external host's there: the allocator's pool holds it, and a flow
// to that host would never leave the VM.
func (ex *execution) hostClash(vm, network string, a scenarios.Addresses) error {
	for _, h := range ex.sc.Topology.Hosts {
		if h.Network != network {
			continue
		}
		for _, fam := range []scenarios.Family{scenarios.V4, scenarios.V6} {
			got, err := netip.ParseAddr(a.Address(fam))
			if err != nil {
				continue
			}
			if have, err := netip.ParseAddr(h.Addresses.Address(fam)); err == nil && have == got {
				return fmt.Errorf("VM %s's pod got %s on network %s, host %s's address: leave the hosts' addresses out of the NAD's subnets (excludeSubnets)",
					vm, got, network, h.Name)
			}
		}
	}
	return nil
}

// recordAssigned records in the world the addresses every running VM's
// pod got on its first network when that has subnets, so that a
// destination address set of the intent holds what the cluster's holds,
// not only for the flow's own endpoints.
func (ex *execution) recordAssigned() error {
	for i := range ex.sc.Topology.VMs {
		vm := &ex.sc.Topology.VMs[i]
		if ex.world.Absent(vm.Name) || !ex.subnets(vm.Network) {
			continue
		}
		if _, err := ex.assigned(vm, vm.Network); err != nil {
			return err
		}
	}
	return nil
}

// runAddrs are the source and destination addresses of flow f in fam, on
// the network it crosses.
func (ex *execution) runAddrs(f *scenarios.Flow, fam scenarios.Family) (src, dst netip.Addr, err error) {
	if err := ex.recordAssigned(); err != nil {
		return src, dst, fmt.Errorf("flow %s: %w", f.Name, err)
	}
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
