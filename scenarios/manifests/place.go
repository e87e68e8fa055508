package manifests

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/nqos/nqos/internal/qos"
)

// Resolved is a VirtualMachine with its NICs' networks and its node.
type Resolved struct {
	VM *VirtualMachine
	// Networks are the NICs' networks, by NIC.
	Networks []qos.Network
	// Node is where the VM runs (or would run once started); "" when it
	// cannot start, and Why says why, as the scheduler would.
	Node string
	Why  string
	// Decided says what put the VM on Node: its nodeSelector, the NNCPs
	// mapping its localnets, the spreading.
	Decided string
}

// Reasons a node cannot run a VM, worded as the scheduler's filters word
// them in "0/N nodes are available: …".
const (
	ReasonNodeSelector = "node(s) didn't match Pod's node affinity/selector"
	reasonLocalnet     = "node(s) didn't map localnet %q (no NodeNetworkConfigurationPolicy bridge-mapping)"
)

// Place places every VM on the named nodes, labelled by the set's Node
// objects (see Labelled and PlaceOn).
func (s *Set) Place(nodes []string) ([]Resolved, error) {
	labelled, err := s.Labelled(nodes)
	if err != nil {
		return nil, err
	}
	return s.PlaceOn(labelled)
}

// PlaceOn resolves every VM's networks and places it: among the nodes
// its nodeSelector matches and on which the NNCPs map every localnet its
// networks use, on the one with fewest VMs so far (in node order). A VM
// that names a NAD no manifest provides, and an NNCP that selects no
// node, are errors; a VM no node can run is returned with Why set.
func (s *Set) PlaceOn(nodes []Node) ([]Resolved, error) {
	nets, err := s.Networks()
	if err != nil {
		return nil, err
	}
	mappings, err := MappingsOn(s.NNCPs, nodes)
	if err != nil {
		return nil, err
	}
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
		r.Node, r.Why, r.Decided = pick(vm, r.Networks, nodes, mappings, load)
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

// pick chooses the VM's node and says why, or says why there is none.
func pick(vm *VirtualMachine, nets []qos.Network, nodes []Node, m Mappings, load map[string]int) (node, why, decided string) {
	var matching, ready []string
	failed := map[string]int{}
	for _, n := range nodes {
		if !selects(vm.NodeSelector, n) {
			failed[ReasonNodeSelector]++
			continue
		}
		matching = append(matching, n.Name)
		if ln := unmapped(nets, n.Name, m); ln != "" {
			failed[fmt.Sprintf(reasonLocalnet, ln)]++
			continue
		}
		ready = append(ready, n.Name)
	}
	if len(ready) == 0 {
		return "", Unschedulable(len(nodes), failed), ""
	}
	best := ready[0]
	for _, n := range ready[1:] {
		if load[n] < load[best] {
			best = n
		}
	}
	return best, "", decision(vm, nets, matching, ready, best, m, len(nodes))
}

// Unschedulable is the scheduler's FitError message for a pod no node
// runs: "0/N nodes are available: " and each reason with its node count,
// sorted, then ".".
func Unschedulable(total int, reasons map[string]int) string {
	var parts []string
	for r, n := range reasons {
		parts = append(parts, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(parts)
	return fmt.Sprintf("0/%d nodes are available: %s.", total, strings.Join(parts, ", "))
}

// unmapped is the first localnet of the VM's networks with no bridge
// mapping on node ("" if all are mapped).
func unmapped(nets []qos.Network, node string, m Mappings) string {
	for _, n := range nets {
		if !m.Mapped(node, n.PhysicalNetworkName) {
			return n.PhysicalNetworkName
		}
	}
	return ""
}

// decision says what put the VM on node, deterministically.
func decision(vm *VirtualMachine, nets []qos.Network, matching, ready []string, node string, m Mappings, total int) string {
	var parts []string
	if len(vm.NodeSelector) == 0 {
		parts = append(parts, fmt.Sprintf("no nodeSelector (any of %d nodes)", total))
	} else {
		parts = append(parts, fmt.Sprintf("nodeSelector %s matches %s", Selector(vm.NodeSelector), strings.Join(matching, ", ")))
	}
	if m.All {
		parts = append(parts, "no NNCP (every node maps every localnet)")
	} else {
		var lns []string
		for _, n := range nets {
			if slices.Contains(lns, n.PhysicalNetworkName) {
				continue
			}
			lns = append(lns, n.PhysicalNetworkName)
			var by []string
			for _, r := range ready {
				if p := m.policy(r, n.PhysicalNetworkName); !slices.Contains(by, p) {
					by = append(by, p)
				}
			}
			parts = append(parts, fmt.Sprintf("localnet %s mapped on %s by NNCP %s", n.PhysicalNetworkName, strings.Join(ready, ", "), strings.Join(by, ", ")))
		}
	}
	if len(ready) == 1 {
		parts = append(parts, "the only node left")
	} else {
		parts = append(parts, "spread: fewest VMs on "+node)
	}
	return strings.Join(parts, "; ")
}

// Hostname is the kubernetes.io/hostname a VM's nodeSelector names ("" if none).
func (vm *VirtualMachine) Hostname() string { return vm.NodeSelector[LabelHostname] }

// NodeHostname is the kubernetes.io/hostname of the testbed's i-th node
// (1-based): node1, node2, … The testbed names its nodes the same way
// (topo/localnet.NodeName; a test there keeps the two equal).
func NodeHostname(i int) string { return fmt.Sprintf("node%d", i) }
