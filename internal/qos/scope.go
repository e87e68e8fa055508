package qos

import "fmt"

// Scope is which selected networks nqos writes rows for.
type Scope int

const (
	// ScopeAllNetworks: every selected localnet and layer2 network. For a
	// cluster where OVN-Kubernetes's own NetworkQoS controller does not
	// run (its --enable-network-qos off), and for the testbed, which has
	// no OVN-Kubernetes controller.
	ScopeAllNetworks Scope = iota
	// ScopeIPAMLess: only the networks OVN-Kubernetes's NetworkQoS cannot
	// serve, those without discoverable pod IPs (ipamless localnet and
	// layer2). Networks with OVN-Kubernetes IPAM or DHCP IPAM are its
	// own: nqos writes no rows there and says so in a warning.
	ScopeIPAMLess
)

// Options are what a compile depends on beyond the object and the facts.
type Options struct {
	// Node restricts port-group members to pods on it; "" is every node.
	Node string
	// Scope is which networks get rows.
	Scope Scope
}

// inScope reports whether n gets rows under s, and why not.
func (s Scope) inScope(n Network) (bool, string) {
	if s == ScopeIPAMLess && n.DiscoverablePodIPs() {
		return false, fmt.Sprintf("network %s has discoverable pod IPs (OVN-Kubernetes or DHCP IPAM): OVN-Kubernetes's own NetworkQoS serves it, nqos writes no rows for it", n.Name)
	}
	return true, ""
}
