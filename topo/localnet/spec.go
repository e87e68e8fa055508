package localnet

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
)

// IPFamily selects the address families the testbed configures.
type IPFamily string

// IP families.
const (
	IPv4      IPFamily = "v4"
	IPv6      IPFamily = "v6"
	DualStack IPFamily = "dual"
)

// HasV4 reports whether the family includes IPv4.
func (f IPFamily) HasV4() bool { return f == IPv4 || f == DualStack }

// HasV6 reports whether the family includes IPv6.
func (f IPFamily) HasV6() bool { return f == IPv6 || f == DualStack }

// Spec declares a testbed; Up builds it.
type Spec struct {
	// RunID (1-4 of [a-z0-9]) is carried by every name the run creates.
	RunID string
	// Nodes is the number of nodes (default 2).
	Nodes int
	// NodeLabels are labels of the nodes' Node objects beyond
	// kubernetes.io/hostname, by node name (node1, node2, …).
	NodeLabels map[string]map[string]string `json:"nodeLabels,omitempty"`
	// Topology lays out OVN's control plane: Central (default) or
	// Interconnect (a zone per node). A KinD cluster is central.
	Topology Topology `json:"topology,omitempty"`
	// IPFamily of hosts and guests (default v4).
	IPFamily IPFamily
	// FabricMTU is the MTU of the fabric bridge and every uplink (default 1500).
	FabricMTU int
	// Networks are the localnet networks (see NetworksFromManifests);
	// default: the OKEP example network vms/tenant-blue.
	Networks []Network
	// Hosts are the external hosts; default DefaultHosts(first network).
	Hosts []HostSpec
	// Routers are the routers on the fabric (router.go); hosts behind
	// one name it in HostSpec.Router.
	Routers []RouterSpec `json:"routers,omitempty"`
	// WithKube starts etcd + kube-apiserver with the CRDs in CRDFiles
	// (default: the CRDs of config/crd embedded in the binary).
	WithKube bool
	CRDFiles []string
	// Kind, if set, runs the testbed on a KinD cluster (kind.go): its
	// first Nodes nodes, its OVN central and its API server; WithKube
	// and CRDFiles are then unused.
	Kind *KindCluster `json:"kind,omitempty"`
	// CollectDir, if set, receives the daemon logs and NB/SB/OVS dumps
	// when the testbed is closed (see Collect).
	CollectDir string
}

// HostSpec is an external host on the fabric: an access port of its
// network's VLAN, addresses given as CIDRs (the family not in the spec's
// IPFamily is left out), iperf3 servers on fixed ports bound to each
// address, and optionally a dnsmasq DHCPv4 server.
type HostSpec struct {
	Name       string
	Network    string
	IPv4       string
	IPv6       string
	IperfPorts []int
	// DHCPRange "first,last" makes the host serve DHCPv4 from that range.
	DHCPRange string
	// Router, if set, puts the host on that router's site LAN instead of
	// the network's VLAN: its traffic to the network's VMs is routed.
	// Network must then be the router's network.
	Router string `json:"router,omitempty"`
}

// DefaultHosts are the hosts of the OKEP example on network: a backup
// server (iperf3 on 5201 and 2049, the NFS port the OKEP classifies), a
// monitoring collector, a generic peer, and a DHCP server when the
// network's IPAM type is dhcp.
func DefaultHosts(n Network) []HostSpec {
	hs := []HostSpec{
		{Name: "backup", Network: n.Name, IPv4: "10.20.0.10/16", IPv6: "fd00:20::10/64", IperfPorts: []int{5201, 2049}},
		{Name: "monitor", Network: n.Name, IPv4: "10.20.0.20/16", IPv6: "fd00:20::20/64", IperfPorts: []int{5201}},
		{Name: "peer", Network: n.Name, IPv4: "10.20.0.30/16", IPv6: "fd00:20::30/64", IperfPorts: []int{5201}},
	}
	if n.IPAMType == "dhcp" {
		hs = append(hs, HostSpec{Name: "dhcp", Network: n.Name, IPv4: "10.20.0.2/16", IPv6: "fd00:20::2/64", DHCPRange: "10.20.2.100,10.20.2.200"})
	}
	return hs
}

// isNodeName reports whether name is one of the first n nodes' names.
func isNodeName(name string, n int) bool {
	for i := 1; i <= n; i++ {
		if NodeName(i) == name {
			return true
		}
	}
	return false
}

// withDefaults fills defaults and validates the spec.
func (s Spec) withDefaults() (Spec, error) {
	if err := ValidateRunID(s.RunID); err != nil {
		return s, err
	}
	if s.Nodes == 0 {
		s.Nodes = 2
	}
	if s.Nodes < 1 || s.Nodes > 16 {
		return s, fmt.Errorf("testbed %s: spec.Nodes %d: must be 1-16", s.RunID, s.Nodes)
	}
	for _, name := range slices.Sorted(maps.Keys(s.NodeLabels)) {
		if !isNodeName(name, s.Nodes) {
			return s, fmt.Errorf("testbed %s: spec.NodeLabels: %q is not a node (node1..node%d)", s.RunID, name, s.Nodes)
		}
	}
	if s.Topology == "" {
		s.Topology = Central
	}
	if _, err := ParseTopology(string(s.Topology)); err != nil {
		return s, fmt.Errorf("testbed %s: spec.Topology: %w", s.RunID, err)
	}
	if err := clusterOf(s, nil).checkSpec(s); err != nil {
		return s, err
	}
	if s.IPFamily == "" {
		s.IPFamily = IPv4
	}
	if !s.IPFamily.HasV4() && !s.IPFamily.HasV6() {
		return s, fmt.Errorf("testbed %s: spec.IPFamily %q: must be v4, v6 or dual", s.RunID, s.IPFamily)
	}
	if s.FabricMTU == 0 {
		s.FabricMTU = 1500
	}
	if s.FabricMTU < 1280 || s.FabricMTU > 9000 {
		return s, fmt.Errorf("testbed %s: spec.FabricMTU %d: must be 1280-9000", s.RunID, s.FabricMTU)
	}
	if len(s.Networks) == 0 {
		n, err := DefaultNetwork()
		if err != nil {
			return s, err
		}
		s.Networks = []Network{n}
	}
	if s.Hosts == nil {
		s.Hosts = DefaultHosts(s.Networks[0])
	}
	if err := s.validateHosts(); err != nil {
		return s, err
	}
	return s, s.validateRouters()
}

func (s Spec) validateHosts() error {
	seen := map[string]bool{}
	for i, h := range s.Hosts {
		if h.Name == "" || seen[h.Name] {
			return fmt.Errorf("testbed %s: spec.Hosts[%d].Name %q: empty or duplicate", s.RunID, i, h.Name)
		}
		seen[h.Name] = true
		if _, ok := s.network(h.Network); !ok {
			return fmt.Errorf("testbed %s: host %s: network %q is not in spec.Networks", s.RunID, h.Name, h.Network)
		}
		for field, cidr := range map[string]string{"IPv4": h.IPv4, "IPv6": h.IPv6} {
			if cidr == "" {
				continue
			}
			if _, err := netip.ParsePrefix(cidr); err != nil {
				return fmt.Errorf("testbed %s: host %s: %s %q: %w", s.RunID, h.Name, field, cidr, err)
			}
		}
	}
	return nil
}

func (s Spec) network(name string) (Network, bool) {
	return byName(s.Networks, name, func(x Network) string { return x.Name })
}

// hostAddrs are the host's CIDRs in the spec's families.
func (s Spec) hostAddrs(h HostSpec) []string { return s.familyAddrs(h.IPv4, h.IPv6) }
