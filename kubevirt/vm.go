// Package kubevirt owns VM-like pods on the localnet testbed: a VM
// declared like a KubeVirt VirtualMachine becomes a virt-launcher Pod in
// the Kubernetes API (template labels, spec.nodeName, multus and
// pod-networks annotations), one LSP per interface named and tagged as
// ovnkube's pod handler does for secondary networks (MAC-only addresses
// and port_security on ipamless networks, requested-chassis), and a guest
// network namespace with its static or DHCP address, plugged into the
// node's br-int. It also performs live migration (per-pod LSPs, or OVN
// multi-chassis binding), launcher restarts and guest IP changes.
package kubevirt

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strings"
)

// VM declares a VirtualMachine.
type VM struct {
	Name      string
	Namespace string
	// Labels are spec.template.metadata.labels: they land on the
	// launcher pod, where NetworkQoS podSelectors match them.
	Labels     map[string]string
	Node       string
	Interfaces []Interface
}

// Interface is one secondary-network NIC of the VM.
type Interface struct {
	// NAD is "ns/name" or "name" (in the VM's namespace).
	NAD string
	MAC string
	// IPv4 and IPv6 are static guest addresses as CIDRs (configured in
	// the guest only; OVN sees them only on networks with subnets).
	IPv4, IPv6 string
	// DHCP makes the guest ask the network's DHCP server for IPv4.
	DHCP bool
	// Routes are the guest's static routes through this NIC (cloud-init
	// gateway4, gateway6 and routes); those of a family the NIC has no
	// address of are not installed.
	Routes []Route
}

// Route is a static guest route: Dst through the gateway Via.
type Route struct {
	Dst netip.Prefix
	Via netip.Addr
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$`)

// nadKey returns "ns/name" of the interface's NAD.
func (i Interface) nadKey(vmNamespace string) (ns, name string) {
	if a, b, ok := strings.Cut(i.NAD, "/"); ok {
		return a, b
	}
	return vmNamespace, i.NAD
}

// Validate checks the VM spec; errors name the VM and field.
func (vm VM) Validate() error {
	if !dnsLabel.MatchString(vm.Name) {
		return fmt.Errorf("VM %q: name: must be a DNS label of at most 42 characters", vm.Name)
	}
	if !dnsLabel.MatchString(vm.Namespace) {
		return fmt.Errorf("VM %s: namespace %q: must be a DNS label", vm.Name, vm.Namespace)
	}
	if vm.Node == "" {
		return fmt.Errorf("VM %s/%s: node: required (no scheduler runs)", vm.Namespace, vm.Name)
	}
	if len(vm.Interfaces) == 0 || len(vm.Interfaces) > 4 {
		return fmt.Errorf("VM %s/%s: interfaces: need 1-4", vm.Namespace, vm.Name)
	}
	for i, ifc := range vm.Interfaces {
		if err := ifc.validate(); err != nil {
			return fmt.Errorf("VM %s/%s: interfaces[%d].%w", vm.Namespace, vm.Name, i, err)
		}
	}
	return nil
}

func (i Interface) validate() error {
	if i.NAD == "" {
		return fmt.Errorf("nad: required")
	}
	if hw, err := net.ParseMAC(i.MAC); err != nil || len(hw) != 6 || hw[0]&1 == 1 {
		return fmt.Errorf("mac %q: must be a unicast Ethernet MAC", i.MAC)
	}
	for field, v := range map[string]string{"ipv4": i.IPv4, "ipv6": i.IPv6} {
		if v == "" {
			continue
		}
		p, err := netip.ParsePrefix(v)
		if err != nil || p.Addr().Is4() != (field == "ipv4") {
			return fmt.Errorf("%s %q: must be an %s CIDR", field, v, field)
		}
	}
	if i.DHCP && i.IPv4 != "" {
		return fmt.Errorf("dhcp: conflicts with a static ipv4")
	}
	for j, r := range i.Routes {
		if !r.Dst.IsValid() || !r.Via.IsValid() || r.Dst.Addr().Is4() != r.Via.Is4() {
			return fmt.Errorf("routes[%d] %s via %s: want a destination prefix and a gateway of its family", j, r.Dst, r.Via)
		}
	}
	return nil
}

// hasFamily reports whether the NIC has (or leases) an address of ip's family.
func (i Interface) hasFamily(ip netip.Addr) bool {
	if ip.Is4() {
		return i.IPv4 != "" || i.DHCP
	}
	return i.IPv6 != ""
}

// NICName is the guest NIC of interface i.
func NICName(i int) string { return fmt.Sprintf("eth%d", i) }
