package qos

import (
	corev1 "k8s.io/api/core/v1"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/api/v1alpha1"
)

// OVN external_ids keys written on every row this controller owns, as
// upstream's libovsdb ops DbObjectIDs spell them.
const (
	OwnerControllerKey = "k8s.ovn.org/owner-controller"
	OwnerTypeKey       = "k8s.ovn.org/owner-type"
	ObjectNameKey      = "k8s.ovn.org/name"
	PrimaryIDKey       = "k8s.ovn.org/id"
	NetworkKey         = "k8s.ovn.org/network"
	RuleIndexKey       = "rule-index"
	IPBlockIndexKey    = "ip-block-index"
	IPFamilyKey        = "ip-family"

	// PortKey is set on a QoS row that matches one logical switch port by
	// name (inport == "<lsp>") instead of the object's port group: its
	// value is that port's name.
	PortKey = "nqos.ovn.org/port"
	// BridgeKey ("true") marks a bridging row: a port-group row's copy
	// for one port that is not a member of the group yet (BridgeRow).
	BridgeKey = "nqos.ovn.org/bridge"

	// OwnerType is the owner-type value of every NetworkQoS-owned row.
	OwnerType = "NetworkQoS"
	// DirectionToLport is the only QoS direction NetworkQoS uses.
	DirectionToLport = "to-lport"
)

// BandwidthScopeAnnotation on a NetworkQoS says what one egress rule's
// bandwidth caps. The NetworkQoS API is upstream's, so the choice is an
// annotation in nqos's own domain.
const (
	BandwidthScopeAnnotation = "nqos.ovn.org/bandwidth-scope"
	// BandwidthScopePerNode (the default, also when the annotation is
	// absent) is OKEP-6815's semantics: one QoS row per rule, one meter
	// per rule and node, shared by every selected port on that node.
	BandwidthScopePerNode = "per-node"
	// BandwidthScopePerPort gives every selected logical switch port (VM
	// NIC) its own cap: a rule with a bandwidth compiles to one QoS row
	// per port (inport == "<lsp>"), so one meter per port. Rules without
	// a bandwidth keep the port-group row.
	BandwidthScopePerPort = "per-port"
)

// Condition types and reasons written on a NetworkQoS.
const (
	ConditionAccepted                    = "Accepted"
	ReasonConfigurationAccepted          = "ConfigurationAccepted"
	ReasonUnsupportedDestinationSelector = "UnsupportedDestinationSelector"
	ReasonInvalidSpec                    = "InvalidSpec"
	ReadyConditionPrefix                 = "Ready-In-Zone-"
)

// Facts is the read-only view of the cluster the compiler works on. An
// in-memory Snapshot implements it for the CLI and tests; the controller
// implements it over its informer indexers. Pods must be indexed by
// namespace so a compile touches only the namespaces it selects.
// Namespaces, PodsInNamespace and NADs return their objects sorted by
// (namespace/)name: which NAD's config wins for a network, and so the
// compiled output, depends on that order.
type Facts interface {
	Namespace(name string) (*corev1.Namespace, bool)
	Namespaces() []*corev1.Namespace
	PodsInNamespace(namespace string) []*corev1.Pod
	NADs() []*nadv1.NetworkAttachmentDefinition
	CUDN(name string) (*udnv1.ClusterUserDefinedNetwork, bool)
}

// Input is a whole cluster's worth of objects, as read from manifests.
type Input struct {
	NetworkQoSes []*v1alpha1.NetworkQoS
	Namespaces   []*corev1.Namespace
	Pods         []*corev1.Pod
	NADs         []*nadv1.NetworkAttachmentDefinition
	CUDNs        []*udnv1.ClusterUserDefinedNetwork
	// Node restricts source port-group members to pods whose
	// spec.nodeName is this node; empty means every node.
	Node string
}

// Desired is the compiler's output for a set of objects; its JSON form is
// the contract of `nqos-sim compile -o json`. Every slice is sorted.
type Desired struct {
	NetworkQoS  []ObjectStatus `json:"networkQoS"`
	PortGroups  []PortGroup    `json:"portGroups"`
	AddressSets []AddressSet   `json:"addressSets"`
	QoS         []QoSRow       `json:"qos"`
	Warnings    []string       `json:"warnings"`
}

// ObjectStatus is the conditions the compiler decides for one NetworkQoS.
type ObjectStatus struct {
	Namespace  string      `json:"namespace"`
	Name       string      `json:"name"`
	Conditions []Condition `json:"conditions"`
}

// Condition is a status condition without timestamps.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// PortGroup is a desired OVN Port_Group; Ports are LSP names.
type PortGroup struct {
	Name        string            `json:"name"`
	Ports       []string          `json:"ports"`
	ExternalIDs map[string]string `json:"externalIDs"`
}

// AddressSet is a desired OVN Address_Set.
type AddressSet struct {
	Name        string            `json:"name"`
	Addresses   []string          `json:"addresses"`
	ExternalIDs map[string]string `json:"externalIDs"`
}

// QoSRow is a desired OVN QoS row and the switch that references it.
type QoSRow struct {
	Switch      string            `json:"switch"`
	Direction   string            `json:"direction"`
	Priority    int               `json:"priority"`
	Match       string            `json:"match"`
	Action      Action            `json:"action"`
	Bandwidth   *Bandwidth        `json:"bandwidth,omitempty"`
	ExternalIDs map[string]string `json:"externalIDs"`
}

// Action is the QoS row's action map.
type Action struct {
	DSCP int `json:"dscp"`
}

// Bandwidth is the QoS row's bandwidth map: rate kbps, burst kilobits;
// zero means the key is absent.
type Bandwidth struct {
	Rate  uint32 `json:"rate,omitempty"`
	Burst uint32 `json:"burst,omitempty"`
}
