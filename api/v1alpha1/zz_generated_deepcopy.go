// Deep-copy functions of the NetworkQoS types, written by hand in the shape
// controller-gen would generate (no code generator runs in this project).

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DeepCopyInto copies the receiver into out.
func (in *NetworkQoS) DeepCopyInto(out *NetworkQoS) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
	in.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a deep copy of the NetworkQoS.
func (in *NetworkQoS) DeepCopy() *NetworkQoS {
	if in == nil {
		return nil
	}
	out := new(NetworkQoS)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *NetworkQoS) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies the receiver into out.
func (in *NetworkQoSList) DeepCopyInto(out *NetworkQoSList) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]NetworkQoS, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a deep copy of the list.
func (in *NetworkQoSList) DeepCopy() *NetworkQoSList {
	if in == nil {
		return nil
	}
	out := new(NetworkQoSList)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *NetworkQoSList) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies the receiver into out.
func (in *Spec) DeepCopyInto(out *Spec) {
	*out = *in
	if in.NetworkSelectors != nil {
		out.NetworkSelectors = make(NetworkSelectors, len(in.NetworkSelectors))
		for i := range in.NetworkSelectors {
			in.NetworkSelectors[i].DeepCopyInto(&out.NetworkSelectors[i])
		}
	}
	in.PodSelector.DeepCopyInto(&out.PodSelector)
	if in.Egress != nil {
		out.Egress = make([]Rule, len(in.Egress))
		for i := range in.Egress {
			in.Egress[i].DeepCopyInto(&out.Egress[i])
		}
	}
}

// DeepCopy returns a deep copy of the spec.
func (in *Spec) DeepCopy() *Spec {
	if in == nil {
		return nil
	}
	out := new(Spec)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out.
func (in *Rule) DeepCopyInto(out *Rule) {
	*out = *in
	if in.Classifier != nil {
		out.Classifier = in.Classifier.DeepCopy()
	}
	if in.Bandwidth != nil {
		b := *in.Bandwidth
		out.Bandwidth = &b
	}
}

// DeepCopy returns a deep copy of the rule.
func (in *Rule) DeepCopy() *Rule {
	if in == nil {
		return nil
	}
	out := new(Rule)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out.
func (in *Classifier) DeepCopyInto(out *Classifier) {
	*out = *in
	if in.To != nil {
		out.To = make([]Destination, len(in.To))
		for i := range in.To {
			in.To[i].DeepCopyInto(&out.To[i])
		}
	}
	if in.Ports != nil {
		out.Ports = make([]*Port, len(in.Ports))
		for i, p := range in.Ports {
			out.Ports[i] = p.DeepCopy()
		}
	}
}

// DeepCopy returns a deep copy of the classifier.
func (in *Classifier) DeepCopy() *Classifier {
	if in == nil {
		return nil
	}
	out := new(Classifier)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out.
func (in *Bandwidth) DeepCopyInto(out *Bandwidth) { *out = *in }

// DeepCopy returns a deep copy of the bandwidth.
func (in *Bandwidth) DeepCopy() *Bandwidth {
	if in == nil {
		return nil
	}
	out := new(Bandwidth)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out.
func (in *Port) DeepCopyInto(out *Port) {
	*out = *in
	if in.Port != nil {
		p := *in.Port
		out.Port = &p
	}
}

// DeepCopy returns a deep copy of the port.
func (in *Port) DeepCopy() *Port {
	if in == nil {
		return nil
	}
	out := new(Port)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out.
func (in *Destination) DeepCopyInto(out *Destination) {
	*out = *in
	out.PodSelector = copySelector(in.PodSelector)
	out.NamespaceSelector = copySelector(in.NamespaceSelector)
	if in.IPBlock != nil {
		out.IPBlock = in.IPBlock.DeepCopy()
	}
}

// DeepCopy returns a deep copy of the destination.
func (in *Destination) DeepCopy() *Destination {
	if in == nil {
		return nil
	}
	out := new(Destination)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out.
func (in *IPBlock) DeepCopyInto(out *IPBlock) {
	*out = *in
	if in.Except != nil {
		out.Except = append([]string(nil), in.Except...)
	}
}

// DeepCopy returns a deep copy of the ipBlock.
func (in *IPBlock) DeepCopy() *IPBlock {
	if in == nil {
		return nil
	}
	out := new(IPBlock)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out.
func (in *Status) DeepCopyInto(out *Status) {
	*out = *in
	if in.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(in.Conditions))
		for i := range in.Conditions {
			in.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
}

// DeepCopy returns a deep copy of the status.
func (in *Status) DeepCopy() *Status {
	if in == nil {
		return nil
	}
	out := new(Status)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out.
func (in *NetworkSelector) DeepCopyInto(out *NetworkSelector) {
	*out = *in
	if s := in.ClusterUserDefinedNetworkSelector; s != nil {
		out.ClusterUserDefinedNetworkSelector = &ClusterUserDefinedNetworkSelector{}
		s.NetworkSelector.DeepCopyInto(&out.ClusterUserDefinedNetworkSelector.NetworkSelector)
	}
	if s := in.PrimaryUserDefinedNetworkSelector; s != nil {
		out.PrimaryUserDefinedNetworkSelector = &PrimaryUserDefinedNetworkSelector{}
		s.NamespaceSelector.DeepCopyInto(&out.PrimaryUserDefinedNetworkSelector.NamespaceSelector)
	}
	if s := in.SecondaryUserDefinedNetworkSelector; s != nil {
		c := &SecondaryUserDefinedNetworkSelector{}
		s.NamespaceSelector.DeepCopyInto(&c.NamespaceSelector)
		s.NetworkSelector.DeepCopyInto(&c.NetworkSelector)
		out.SecondaryUserDefinedNetworkSelector = c
	}
	if s := in.NetworkAttachmentDefinitionSelector; s != nil {
		c := &NetworkAttachmentDefinitionSelector{}
		s.NamespaceSelector.DeepCopyInto(&c.NamespaceSelector)
		s.NetworkSelector.DeepCopyInto(&c.NetworkSelector)
		out.NetworkAttachmentDefinitionSelector = c
	}
}

// DeepCopy returns a deep copy of the network selector.
func (in *NetworkSelector) DeepCopy() *NetworkSelector {
	if in == nil {
		return nil
	}
	out := new(NetworkSelector)
	in.DeepCopyInto(out)
	return out
}

func copySelector(in *metav1.LabelSelector) *metav1.LabelSelector {
	if in == nil {
		return nil
	}
	return in.DeepCopy()
}
