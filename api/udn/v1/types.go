// Package v1 owns a minimal copy of the k8s.ovn.org/v1
// ClusterUserDefinedNetwork type: the fields nqos needs to resolve a CUDN
// network selector and to build a localnet network from a CUDN manifest.
package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Group, version and kind of the ClusterUserDefinedNetwork CRD.
const (
	GroupName = "k8s.ovn.org"
	Version   = "v1"
	Kind      = "ClusterUserDefinedNetwork"
	Resource  = "clusteruserdefinednetworks"
)

// ClusterUserDefinedNetwork is a cluster-scoped network rendered into one
// NAD (owned by the CUDN, named like it) per selected namespace.
type ClusterUserDefinedNetwork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec `json:"spec,omitempty"`
}

// Spec of a CUDN.
type Spec struct {
	NamespaceSelector metav1.LabelSelector `json:"namespaceSelector"`
	Network           Network              `json:"network"`
}

// Network describes the topology; only Localnet is modelled in detail.
type Network struct {
	Topology string    `json:"topology"`
	Localnet *Localnet `json:"localnet,omitempty"`
}

// Localnet is the localnet topology configuration.
type Localnet struct {
	Role                string   `json:"role"`
	PhysicalNetworkName string   `json:"physicalNetworkName"`
	Subnets             []string `json:"subnets,omitempty"`
	MTU                 int      `json:"mtu,omitempty"`
	IPAM                *IPAM    `json:"ipam,omitempty"`
	VLAN                *VLAN    `json:"vlan,omitempty"`
}

// IPAM configures address management: mode Enabled or Disabled; the
// DHCP mode of OKEP-6224 is spelled type: DHCP.
type IPAM struct {
	Mode string `json:"mode,omitempty"`
	Type string `json:"type,omitempty"`
}

// VLAN configures access-mode tagging.
type VLAN struct {
	Mode   string      `json:"mode"`
	Access *VLANAccess `json:"access,omitempty"`
}

// VLANAccess is the access VLAN ID.
type VLANAccess struct {
	ID int `json:"id"`
}

// NetworkName is the OVN-Kubernetes network name of a CUDN.
func NetworkName(cudnName string) string { return "cluster_udn_" + cudnName }
