package kubevirt

import (
	"fmt"

	"github.com/nqos/nqos/scenarios/manifests"
)

// GeneratedMAC is the testbed's MAC for the n-th NIC it generates one for
// (0-based): locally administered unicast 0a:58:00:00:xx:xx, unique
// within a run, as KubeMacPool hands out MACs from its pool.
func GeneratedMAC(n int) string {
	return fmt.Sprintf("0a:58:00:00:%02x:%02x", (n+1)>>8, (n+1)&0xff)
}

// MACOr is mac when set, else GeneratedMAC(n).
func MACOr(mac string, n int) string {
	if mac != "" {
		return mac
	}
	return GeneratedMAC(n)
}

// FromManifest is the VM the Manager runs for a placed VirtualMachine
// manifest: template labels, the node Place chose, one interface per
// multus NIC with its MAC (interfaces[].macAddress, else generated from
// macBase+i), cloud-init static addresses or DHCP. It fails for a VM that
// cannot start, with the reason.
func FromManifest(r manifests.Resolved, macBase int) (VM, error) {
	if r.Node == "" {
		return VM{}, fmt.Errorf("VirtualMachine %s/%s does not start: %s", r.VM.Namespace, r.VM.Name, r.Why)
	}
	vm := VM{Name: r.VM.Name, Namespace: r.VM.Namespace, Labels: r.VM.Labels, Node: r.Node}
	for i, nic := range r.VM.NICs {
		vm.Interfaces = append(vm.Interfaces, Interface{NAD: nic.NAD, MAC: MACOr(nic.MAC, macBase+i),
			IPv4: nic.IPv4, IPv6: nic.IPv6, DHCP: nic.DHCP, Routes: routesOf(nic.Routes)})
	}
	if err := vm.Validate(); err != nil {
		return VM{}, err
	}
	return vm, nil
}

// routesOf converts cloud-init routes of a manifest NIC.
func routesOf(rs []manifests.Route) []Route {
	var out []Route
	for _, r := range rs {
		out = append(out, Route{Dst: r.To, Via: r.Via})
	}
	return out
}
