package manifests

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/nqos/nqos/internal/qos"
)

// Resolved is a VirtualMachine with its NICs' networks and its node.
type Resolved struct {
	VM *VirtualMachine
	// Networks are the NICs' networks, by NIC.
	Networks []qos.Network
	// Node is where the VM runs (or would run once started); "" when it
	// cannot start, and Why says why, as a real cluster would.
	Node string
	Why  string
}

// Place resolves every VM's networks and places it: on the node its
// nodeSelector (kubernetes.io/hostname) names, otherwise spread over the
// nodes (the one with fewest VMs so far, in node order) that map every
// localnet its networks use. A VM that names a NAD no manifest provides
// is an error; one no node can run is returned with Why set.
func (s *Set) Place(nodes []string) ([]Resolved, error) {
	nets, err := s.Networks()
	if err != nil {
		return nil, err
	}
	mappings := NodeMappings(s.NNCPs, nodes)
	load := map[string]int{}
	out := make([]Resolved, 0, len(s.VMs))
	for _, vm := range s.VMs {
		r := Resolved{VM: vm}
		for _, nic := range vm.NICs {
			n, ok := nets[nic.NAD]
			if !ok {
				return nil, vm.Object.errf(fmt.Sprintf("spec.template.spec.networks[%d].multus.networkName", nic.NetworkIndex),
					"NAD %s: no NetworkAttachmentDefinition, and no ClusterUserDefinedNetwork selecting namespace %s, provides it", nic.NAD, nadNamespace(nic.NAD))
			}
			r.Networks = append(r.Networks, n)
		}
		r.Node, r.Why = pick(vm, r.Networks, nodes, mappings, load)
		if r.Node != "" {
			load[r.Node]++
		}
		out = append(out, r)
	}
	return out, nil
}

func nadNamespace(key string) string {
	ns, _, _ := strings.Cut(key, "/")
	return ns
}

// pick chooses the VM's node, or says why there is none.
func pick(vm *VirtualMachine, nets []qos.Network, nodes []string, m Mappings, load map[string]int) (string, string) {
	sel := labels.SelectorFromSet(vm.NodeSelector)
	var matching, ready []string
	for _, n := range nodes {
		if !sel.Matches(NodeLabels(n)) {
			continue
		}
		matching = append(matching, n)
		if missing(nets, n, m) == "" {
			ready = append(ready, n)
		}
	}
	switch {
	case len(matching) == 0:
		return "", fmt.Sprintf("spec.template.spec.nodeSelector %v matches no node (nodes: %s)", vm.NodeSelector, strings.Join(nodes, ", "))
	case len(ready) == 0:
		return "", fmt.Sprintf("not schedulable: %s", missing(nets, matching[0], m))
	}
	best := ready[0]
	for _, n := range ready[1:] {
		if load[n] < load[best] {
			best = n
		}
	}
	return best, ""
}

// missing says which network of the VM has no bridge mapping on node ("" if none).
func missing(nets []qos.Network, node string, m Mappings) string {
	for _, n := range nets {
		if !m.Mapped(node, n.PhysicalNetworkName) {
			return fmt.Sprintf("network %s needs localnet %q, which no NodeNetworkConfigurationPolicy bridge-mapping maps on node %s", n.Name, n.PhysicalNetworkName, node)
		}
	}
	return ""
}

// Hostname is the kubernetes.io/hostname a VM's nodeSelector names ("" if none).
func (vm *VirtualMachine) Hostname() string { return vm.NodeSelector[LabelHostname] }

// NodeHostname is the kubernetes.io/hostname of the testbed's i-th node
// (1-based): node1, node2, … The testbed names its nodes the same way
// (topo/localnet.NodeName; a test there keeps the two equal).
func NodeHostname(i int) string { return fmt.Sprintf("node%d", i) }
