// Package v1 owns a minimal copy of the k8s.cni.cncf.io/v1
// NetworkAttachmentDefinition type (metadata plus the CNI config string),
// enough for nqos to read networks without importing the multus client.
package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Group, version and resource of the NetworkAttachmentDefinition CRD.
const (
	GroupName = "k8s.cni.cncf.io"
	Version   = "v1"
	Kind      = "NetworkAttachmentDefinition"
	Resource  = "network-attachment-definitions"
	// NetworksAnnotation is the multus pod annotation naming the NADs a
	// pod attaches to: "a, ns/b" or a JSON list of {name, namespace}.
	NetworksAnnotation = "k8s.v1.cni.cncf.io/networks"
)

// NetworkAttachmentDefinition is a multus network attachment.
type NetworkAttachmentDefinition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec `json:"spec,omitempty"`
}

// Spec holds the CNI configuration as a JSON string.
type Spec struct {
	Config string `json:"config,omitempty"`
}

// NetworkAttachmentDefinitionList is a list of NADs.
type NetworkAttachmentDefinitionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NetworkAttachmentDefinition `json:"items"`
}

// DeepCopy returns a deep copy of the NAD.
func (n *NetworkAttachmentDefinition) DeepCopy() *NetworkAttachmentDefinition {
	if n == nil {
		return nil
	}
	out := &NetworkAttachmentDefinition{TypeMeta: n.TypeMeta, Spec: n.Spec}
	n.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}
