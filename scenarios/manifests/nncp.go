package manifests

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
)

// nmstate's NodeNetworkConfigurationPolicy.
const (
	NNCPAPIVersion = "nmstate.io/v1"
	NNCPKind       = "NodeNetworkConfigurationPolicy"
)

// NNCP is the part of a NodeNetworkConfigurationPolicy the testbed uses:
// which nodes it selects and the OVN bridge mappings it sets there.
type NNCP struct {
	Object       *Object
	Name         string
	NodeSelector map[string]string
	Mappings     []BridgeMapping
}

// BridgeMapping maps a localnet (a CUDN's physicalNetworkName) to an OVS
// bridge; Present false removes the mapping.
type BridgeMapping struct {
	Localnet, Bridge string
	Present          bool
}

type nncpDoc struct {
	Spec struct {
		NodeSelector map[string]string `json:"nodeSelector"`
		DesiredState struct {
			OVN struct {
				BridgeMappings []struct {
					Localnet string `json:"localnet"`
					Bridge   string `json:"bridge"`
					State    string `json:"state"`
				} `json:"bridge-mappings"`
			} `json:"ovn"`
		} `json:"desiredState"`
	} `json:"spec"`
}

// DecodeNNCP decodes and validates a NodeNetworkConfigurationPolicy.
func DecodeNNCP(o *Object) (*NNCP, error) {
	if o.APIVersion != NNCPAPIVersion {
		return nil, o.errf("apiVersion", "%q, want %s", o.APIVersion, NNCPAPIVersion)
	}
	var doc nncpDoc
	if err := o.into(&doc); err != nil {
		return nil, err
	}
	p := &NNCP{Object: o, Name: o.Name, NodeSelector: doc.Spec.NodeSelector}
	for i, m := range doc.Spec.DesiredState.OVN.BridgeMappings {
		f := fmt.Sprintf("spec.desiredState.ovn.bridge-mappings[%d]", i)
		switch {
		case m.Localnet == "":
			return nil, o.errf(f+".localnet", "required")
		case m.Bridge == "":
			return nil, o.errf(f+".bridge", "required")
		case m.State != "" && m.State != "present" && m.State != "absent":
			return nil, o.errf(f+".state", "%q, want present or absent", m.State)
		}
		p.Mappings = append(p.Mappings, BridgeMapping{Localnet: m.Localnet, Bridge: m.Bridge, Present: m.State != "absent"})
	}
	return p, nil
}

// NodeLabels are the labels a testbed node carries by default.
func NodeLabels(node string) labels.Set {
	return labels.Set{LabelHostname: node, LabelWorker: ""}
}

// Selects reports whether the policy applies to a node with the default
// labels (an empty nodeSelector selects every node).
func (p *NNCP) Selects(node string) bool { return p.SelectsNode(DefaultNode(node, nil)) }

// SelectsNode reports whether the policy applies to node.
func (p *NNCP) SelectsNode(n Node) bool { return selects(p.NodeSelector, n) }

// Mappings are the localnets mapped per node by a set of policies, in
// policy order (a later absent mapping removes an earlier one). Without
// any policy every localnet is mapped on every node, as the testbed's
// nodes are booted; All reports that case.
type Mappings struct {
	All    bool
	byNode map[string]map[string]mapping // node -> localnet -> mapping
}

// mapping is one localnet's bridge on a node and the policy that set it.
type mapping struct{ bridge, policy string }

// NodeMappings computes the bridge mappings of nodes with the default
// labels.
func NodeMappings(policies []*NNCP, nodes []string) Mappings {
	m, _ := mappingsOn(policies, DefaultNodes(nodes))
	return m
}

// MappingsOn computes the bridge mappings of nodes; a policy whose
// nodeSelector selects none of them is an error naming it and its
// selector (the policy would apply nowhere).
func MappingsOn(policies []*NNCP, nodes []Node) (Mappings, error) {
	return mappingsOn(policies, nodes)
}

func mappingsOn(policies []*NNCP, nodes []Node) (Mappings, error) {
	m := Mappings{All: len(policies) == 0, byNode: map[string]map[string]mapping{}}
	var err error
	selected := map[*NNCP]bool{}
	for _, n := range nodes {
		m.byNode[n.Name] = map[string]mapping{}
		for _, p := range policies {
			if !p.SelectsNode(n) {
				continue
			}
			selected[p] = true
			for _, bm := range p.Mappings {
				if bm.Present {
					m.byNode[n.Name][bm.Localnet] = mapping{bridge: bm.Bridge, policy: p.Name}
				} else {
					delete(m.byNode[n.Name], bm.Localnet)
				}
			}
		}
	}
	for _, p := range policies {
		if !selected[p] && err == nil {
			err = p.Object.errf("spec.nodeSelector", "%s selects no node (nodes: %s)", Selector(p.NodeSelector), NodeList(nodes))
		}
	}
	return m, err
}

// Mapped reports whether localnet is mapped on node.
func (m Mappings) Mapped(node, localnet string) bool {
	if m.All {
		return true
	}
	_, ok := m.byNode[node][localnet]
	return ok
}

// policy is the policy mapping localnet on node ("" when none does).
func (m Mappings) policy(node, localnet string) string {
	return m.byNode[node][localnet].policy
}
