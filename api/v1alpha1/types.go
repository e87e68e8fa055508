package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Group, version and resource names of the NetworkQoS CRD.
const (
	GroupName = "k8s.ovn.org"
	Version   = "v1alpha1"
	Kind      = "NetworkQoS"
	Resource  = "networkqoses"
)

// Network selection types admitted by the NetworkQoS CRD's CEL rule.
const (
	NetworkAttachmentDefinitions = "NetworkAttachmentDefinitions"
	ClusterUserDefinedNetworks   = "ClusterUserDefinedNetworks"
	DefaultNetwork               = "DefaultNetwork"
	PrimaryUserDefinedNetworks   = "PrimaryUserDefinedNetworks"
	SecondaryUserDefinedNetworks = "SecondaryUserDefinedNetworks"
)

// NetworkQoS marks and polices the egress traffic of selected pods.
type NetworkQoS struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Spec   `json:"spec,omitempty"`
	Status Status `json:"status,omitempty"`
}

// NetworkQoSList is a list of NetworkQoS.
type NetworkQoSList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NetworkQoS `json:"items"`
}

// Spec is the desired state of a NetworkQoS.
type Spec struct {
	// NetworkSelectors selects the networks the rules apply to (1..5
	// entries, immutable, one per networkSelectionType).
	NetworkSelectors NetworkSelectors `json:"networkSelectors,omitempty"`
	// PodSelector selects the source pods in the object's namespace; empty
	// selects all of them.
	PodSelector metav1.LabelSelector `json:"podSelector,omitempty"`
	// Priority orders NetworkQoS objects (0..100); higher wins.
	Priority int `json:"priority"`
	// Egress lists up to 20 rules; later rules take higher precedence.
	Egress []Rule `json:"egress"`
}

// Rule is one egress rule: a DSCP mark, an optional policer and an
// optional classifier.
type Rule struct {
	DSCP       int         `json:"dscp"`
	Classifier *Classifier `json:"classifier,omitempty"`
	Bandwidth  *Bandwidth  `json:"bandwidth,omitempty"`
}

// Classifier restricts a rule to destinations and ports.
type Classifier struct {
	To    []Destination `json:"to,omitempty"`
	Ports []*Port       `json:"ports,omitempty"`
}

// Bandwidth polices matching traffic: rate in kbps, burst in kilobits.
// Unlike upstream, both fields are omitempty, so an object without a
// bandwidth never serialises rate: 0 (which the CRD's minimum rejects).
type Bandwidth struct {
	Rate  uint32 `json:"rate,omitempty"`
	Burst uint32 `json:"burst,omitempty"`
}

// Port is a protocol and an optional destination port.
type Port struct {
	Protocol string `json:"protocol,omitempty"`
	Port     *int32 `json:"port,omitempty"`
}

// Destination is a pod/namespace selector pair or an ipBlock, never both.
type Destination struct {
	PodSelector       *metav1.LabelSelector `json:"podSelector,omitempty"`
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	IPBlock           *IPBlock              `json:"ipBlock,omitempty"`
}

// IPBlock is a CIDR with optional excluded CIDRs inside it (the same shape
// as networking.k8s.io/v1 IPBlock).
type IPBlock struct {
	CIDR   string   `json:"cidr"`
	Except []string `json:"except,omitempty"`
}

// Status is the observed state of a NetworkQoS.
type Status struct {
	Status     string             `json:"status,omitempty"`
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NetworkSelectors is the list of network selectors of a NetworkQoS.
type NetworkSelectors []NetworkSelector

// NetworkSelector selects networks of one selection type.
type NetworkSelector struct {
	NetworkSelectionType                string                               `json:"networkSelectionType"`
	ClusterUserDefinedNetworkSelector   *ClusterUserDefinedNetworkSelector   `json:"clusterUserDefinedNetworkSelector,omitempty"`
	PrimaryUserDefinedNetworkSelector   *PrimaryUserDefinedNetworkSelector   `json:"primaryUserDefinedNetworkSelector,omitempty"`
	SecondaryUserDefinedNetworkSelector *SecondaryUserDefinedNetworkSelector `json:"secondaryUserDefinedNetworkSelector,omitempty"`
	NetworkAttachmentDefinitionSelector *NetworkAttachmentDefinitionSelector `json:"networkAttachmentDefinitionSelector,omitempty"`
}

// ClusterUserDefinedNetworkSelector selects CUDNs by label.
type ClusterUserDefinedNetworkSelector struct {
	NetworkSelector metav1.LabelSelector `json:"networkSelector"`
}

// PrimaryUserDefinedNetworkSelector selects primary UDNs by namespace.
type PrimaryUserDefinedNetworkSelector struct {
	NamespaceSelector metav1.LabelSelector `json:"namespaceSelector"`
}

// SecondaryUserDefinedNetworkSelector selects secondary UDNs.
type SecondaryUserDefinedNetworkSelector struct {
	NamespaceSelector metav1.LabelSelector `json:"namespaceSelector"`
	NetworkSelector   metav1.LabelSelector `json:"networkSelector"`
}

// NetworkAttachmentDefinitionSelector selects NADs by namespace and label.
type NetworkAttachmentDefinitionSelector struct {
	NamespaceSelector metav1.LabelSelector `json:"namespaceSelector"`
	NetworkSelector   metav1.LabelSelector `json:"networkSelector"`
}
