package v1

import (
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
)

// Labels and finalizer ovnkube's CUDN controller puts on the NADs it
// renders.
const (
	LabelUserDefinedNetwork     = "k8s.ovn.org/user-defined-network"
	FinalizerUserDefinedNetwork = "k8s.ovn.org/user-defined-network-protection"
	// DefaultLocalnetMTU is the MTU a localnet CUDN gets without spec.network.localnet.mtu.
	DefaultLocalnetMTU = 1500
)

// NetConf is the CNI config ovnkube renders for a localnet CUDN.
type NetConf struct {
	CNIVersion          string       `json:"cniVersion"`
	Name                string       `json:"name"`
	Type                string       `json:"type"`
	Topology            string       `json:"topology"`
	Role                string       `json:"role,omitempty"`
	PhysicalNetworkName string       `json:"physicalNetworkName"`
	Subnets             string       `json:"subnets,omitempty"`
	MTU                 int          `json:"mtu,omitempty"`
	VLANID              int          `json:"vlanID,omitempty"`
	IPAM                *NetConfIPAM `json:"ipam,omitempty"`
	NetAttachDefName    string       `json:"netAttachDefName"`
}

// NetConfIPAM is the ipam section of a rendered config (DHCP only).
type NetConfIPAM struct {
	Type string `json:"type"`
}

// IsDHCP reports whether the localnet CUDN delegates addressing to a
// DHCP server (ipam type DHCP).
func (l *Localnet) IsDHCP() bool { return l.IPAM != nil && strings.EqualFold(l.IPAM.Type, "dhcp") }

// NetConf is the CNI config of the CUDN's NAD in namespace ns.
func (c *ClusterUserDefinedNetwork) NetConf(ns string) (NetConf, error) {
	ln := c.Spec.Network.Localnet
	if c.Spec.Network.Topology != "Localnet" || ln == nil {
		return NetConf{}, fmt.Errorf("ClusterUserDefinedNetwork %s: spec.network.topology %q: only Localnet is modelled", c.Name, c.Spec.Network.Topology)
	}
	conf := NetConf{
		CNIVersion: "1.0.0", Name: NetworkName(c.Name), Type: "ovn-k8s-cni-overlay", Topology: "localnet",
		Role: strings.ToLower(ln.Role), PhysicalNetworkName: ln.PhysicalNetworkName,
		Subnets: strings.Join(ln.Subnets, ","), MTU: ln.MTU, NetAttachDefName: ns + "/" + c.Name,
	}
	if conf.MTU == 0 {
		conf.MTU = DefaultLocalnetMTU
	}
	if ln.VLAN != nil && ln.VLAN.Access != nil {
		conf.VLANID = ln.VLAN.Access.ID
	}
	if ln.IsDHCP() {
		conf.IPAM = &NetConfIPAM{Type: "dhcp"}
	}
	return conf, nil
}

// RenderNADs renders a localnet CUDN into one NAD per namespace its
// namespaceSelector selects, as ovnkube's CUDN controller does: named like
// the CUDN, in the namespace, labelled k8s.ovn.org/user-defined-network
// plus the CUDN's own labels (except k8s.ovn.org/ ones), with the
// protection finalizer, a controller ownerReference to the CUDN, and the
// config with netAttachDefName "<ns>/<cudn>". nsLabels maps namespace
// names to their labels; the NADs are sorted by namespace. Selecting no
// namespace is not an error (the CUDN then renders nothing).
func RenderNADs(c *ClusterUserDefinedNetwork, nsLabels map[string]map[string]string) ([]*nadv1.NetworkAttachmentDefinition, error) {
	sel, err := metav1.LabelSelectorAsSelector(&c.Spec.NamespaceSelector)
	if err != nil {
		return nil, fmt.Errorf("ClusterUserDefinedNetwork %s: spec.namespaceSelector: %w", c.Name, err)
	}
	names := make([]string, 0, len(nsLabels))
	for ns, l := range nsLabels {
		set := labels.Set(maps.Clone(l))
		if set == nil {
			set = labels.Set{}
		}
		set["kubernetes.io/metadata.name"] = ns
		if sel.Matches(set) {
			names = append(names, ns)
		}
	}
	sort.Strings(names)
	out := make([]*nadv1.NetworkAttachmentDefinition, 0, len(names))
	for _, ns := range names {
		conf, err := c.NetConf(ns)
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(conf)
		if err != nil {
			return nil, fmt.Errorf("ClusterUserDefinedNetwork %s: render NAD config: %w", c.Name, err)
		}
		out = append(out, &nadv1.NetworkAttachmentDefinition{
			TypeMeta: metav1.TypeMeta{APIVersion: nadv1.APIVersion(), Kind: nadv1.Kind},
			ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: ns, Labels: nadLabels(c.Labels),
				Finalizers: []string{FinalizerUserDefinedNetwork},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: APIVersion(), Kind: Kind, Name: c.Name, UID: c.UID,
					Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}},
			Spec: nadv1.Spec{Config: string(raw)},
		})
	}
	return out, nil
}

func nadLabels(cudn map[string]string) map[string]string {
	out := map[string]string{LabelUserDefinedNetwork: ""}
	for k, v := range cudn {
		if !strings.HasPrefix(k, "k8s.ovn.org/") {
			out[k] = v
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }
