package intent

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/nqos/nqos/internal/qos"
)

// Share is one meter on one node: a metered rule's QoS row is one meter
// per node (ovn-controller makes one per logical flow and chassis), and
// every selected VM on that node sends through it.
type Share struct {
	Rule      string   `json:"rule"` // "ns/name#i"
	Kbps      uint32   `json:"kbps"`
	BurstKbit uint32   `json:"burstKbit"`
	Switch    string   `json:"switch"`
	Node      string   `json:"node"`
	VMs       []string `json:"vms"` // the selected VMs on the node, sorted
	// PerVM: the row matches one VM NIC by name (bandwidth-scope
	// per-port), so the meter is that NIC's alone.
	PerVM bool `json:"perVM,omitempty"`
}

// String says the sharing as an admin reads it.
func (s Share) String() string {
	if s.PerVM {
		return fmt.Sprintf("cap %d kbps per VM NIC, on %s for %s alone (%s=%s)", s.Kbps, s.Node, strings.Join(s.VMs, ", "),
			qos.BandwidthScopeAnnotation, qos.BandwidthScopePerPort)
	}
	head := fmt.Sprintf("cap %d kbps per node", s.Kbps)
	if len(s.VMs) == 1 {
		return fmt.Sprintf("%s, on %s for %s alone", head, s.Node, s.VMs[0])
	}
	return fmt.Sprintf("%s, shared on %s by %d selected VMs (%s)", head, s.Node, len(s.VMs), strings.Join(s.VMs, ", "))
}

// Meters are the meters of d's metered rows per node with the VMs of c
// that share each: the members of the row's inport port group, grouped by
// their node; a per-port row's meter is its one VM's. Sorted by rule,
// switch, node and VMs.
func Meters(c *Cluster, d *qos.Desired) []Share {
	byPort := make(map[string]*VM, len(c.VMs))
	for i := range c.VMs {
		byPort[c.VMs[i].Port] = &c.VMs[i]
	}
	members := make(map[string][]string, len(d.PortGroups))
	for _, pg := range d.PortGroups {
		members[pg.Name] = pg.Ports
	}
	var out []Share
	for i := range d.QoS {
		r := &d.QoS[i]
		if !metered(r) {
			continue
		}
		toks, err := tokenize(r.Match)
		if err != nil {
			continue
		}
		if port := r.ExternalIDs[qos.PortKey]; port != "" {
			if vm := byPort[port]; vm != nil && vm.Switch == r.Switch {
				out = append(out, Share{Rule: RowRef(r), Kbps: r.Bandwidth.Rate, BurstKbit: r.Bandwidth.Burst, Switch: r.Switch,
					Node: vm.Node, VMs: []string{vm.Ref}, PerVM: true})
			}
			continue
		}
		perNode := map[string][]string{}
		for _, p := range members[inportGroup(toks)] {
			if vm := byPort[p]; vm != nil && vm.Switch == r.Switch {
				perNode[vm.Node] = append(perNode[vm.Node], vm.Ref)
			}
		}
		for node, vms := range perNode {
			slices.Sort(vms)
			out = append(out, Share{Rule: RowRef(r), Kbps: r.Bandwidth.Rate, BurstKbit: r.Bandwidth.Burst, Switch: r.Switch, Node: node, VMs: vms})
		}
	}
	slices.SortFunc(out, func(a, b Share) int {
		return cmp.Or(cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Switch, b.Switch), cmp.Compare(a.Node, b.Node),
			slices.Compare(a.VMs, b.VMs))
	})
	return out
}
