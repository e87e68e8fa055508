package intent

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios/manifests"
)

// Launcher pod labels KubeVirt sets.
const (
	LabelKubeVirt      = "kubevirt.io"
	LauncherLabelValue = "virt-launcher"
	LabelVMName        = "vm.kubevirt.io/name"
	podNetworksKey     = "k8s.ovn.org/pod-networks"
)

// Live is a cluster as read from its API server: the objects as the
// server returns them (unstructured), the launcher pods typed.
type Live struct {
	Source string // names the cluster in messages
	// Objects are Namespaces, NetworkQoS, ClusterUserDefinedNetworks,
	// NetworkAttachmentDefinitions, NodeNetworkConfigurationPolicies and
	// (where KubeVirt is served) VirtualMachines.
	Objects []map[string]any
	// VMIs are VirtualMachineInstances (status.interfaces give the guest
	// addresses the guest agent reports).
	VMIs []map[string]any
	// Pods are the virt-launcher pods: they are the VMs, on their nodes.
	Pods []*corev1.Pod
}

// FromLive is the cluster the live objects make: each running launcher
// pod is a VM (its labels, node, networks annotation); its guest
// addresses come from its VirtualMachine's cloud-init, its VMI's status,
// or its pod-networks annotation, else they are unknown and its classes
// are derived from the documentation ranges.
func FromLive(l *Live) (*Cluster, error) {
	var objs []*manifests.Object
	for _, raw := range l.Objects {
		o, err := manifests.NewObject(l.Source, 0, trimmed(raw))
		if err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	set, err := manifests.Decode(objs)
	if err != nil {
		return nil, err
	}
	if err := dropRendered(set); err != nil {
		return nil, err
	}
	c := &Cluster{}
	for _, group := range [][]*manifests.Object{set.Namespaces, set.NetworkQoS} {
		for _, o := range group {
			if err := decodeInto(&c.Input, o); err != nil {
				return nil, err
			}
		}
	}
	if c.Input.NADs, err = set.AllNADs(); err != nil {
		return nil, err
	}
	c.Input.CUDNs = set.CUDNs
	nets, err := set.Networks()
	if err != nil {
		return nil, err
	}
	addrs := guestAddrs(set, l.VMIs)
	for _, pod := range l.Pods {
		vm, note := liveVM(pod, nets, addrs)
		if note != "" {
			c.Notes = append(c.Notes, note)
			continue
		}
		if vm.Unknown {
			c.Notes = append(c.Notes, vm.Ref+": guest addresses unknown (no VirtualMachine cloud-init, VMI status or pod-networks address): "+
				"destinations from the documentation ranges, source-address matches not evaluated")
		}
		c.VMs = append(c.VMs, vm)
		c.Input.Pods = append(c.Input.Pods, pod)
	}
	c.sort()
	return c, nil
}

// dropRendered removes the NADs a cluster's CUDN controller rendered
// from the CUDNs (the set renders them itself).
func dropRendered(set *manifests.Set) error {
	rendered := map[string]bool{}
	for _, c := range set.CUDNs {
		nads, err := udnv1.RenderNADs(c, set.NamespaceLabels())
		if err != nil {
			return fmt.Errorf("ClusterUserDefinedNetwork %s: %w", c.Name, err)
		}
		for _, n := range nads {
			rendered[n.Namespace+"/"+n.Name] = true
		}
	}
	set.NADs = slices.DeleteFunc(set.NADs, func(n *nadv1.NetworkAttachmentDefinition) bool { return rendered[n.Namespace+"/"+n.Name] })
	return nil
}

// trimmed keeps what the decoders read: apiVersion, kind, the metadata's
// name, namespace and labels, spec.
func trimmed(raw map[string]any) map[string]any {
	out := map[string]any{"apiVersion": raw["apiVersion"], "kind": raw["kind"]}
	if meta, ok := raw["metadata"].(map[string]any); ok {
		m := map[string]any{}
		for _, k := range []string{"name", "namespace", "labels"} {
			if v, ok := meta[k]; ok {
				m[k] = v
			}
		}
		out["metadata"] = m
	}
	if spec, ok := raw["spec"]; ok {
		out["spec"] = spec
	}
	return out
}

// guestAddrs are the first NIC's addresses by VM "ns/name": from the
// VirtualMachines' cloud-init, overridden by what the VMIs report.
func guestAddrs(set *manifests.Set, vmis []map[string]any) map[string][]netip.Prefix {
	out := map[string][]netip.Prefix{}
	for _, vm := range set.VMs {
		if len(vm.NICs) > 0 {
			out[vm.Namespace+"/"+vm.Name] = prefixes(vm.NICs[0].IPv4, vm.NICs[0].IPv6)
		}
	}
	for _, vmi := range vmis {
		meta, _ := vmi["metadata"].(map[string]any)
		status, _ := vmi["status"].(map[string]any)
		ifcs, _ := status["interfaces"].([]any)
		if len(ifcs) < 2 { // the pod network first, then the multus NICs
			continue
		}
		first, _ := ifcs[1].(map[string]any)
		var got []string
		if ips, ok := first["ipAddresses"].([]any); ok {
			for _, ip := range ips {
				if s, ok := ip.(string); ok {
					got = append(got, s)
				}
			}
		}
		if p := prefixes(got...); len(p) > 0 {
			out[fmt.Sprint(meta["namespace"])+"/"+fmt.Sprint(meta["name"])] = p
		}
	}
	return out
}

// prefixes parses CIDRs or bare addresses (as host prefixes), skipping
// what does not parse and link-local addresses.
func prefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				continue
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if !p.Addr().IsLinkLocalUnicast() {
			out = append(out, p)
		}
	}
	return out
}

// liveVM is the VM of a launcher pod, or a note saying why it is left out.
func liveVM(pod *corev1.Pod, nets map[string]qos.Network, addrs map[string][]netip.Prefix) (VM, string) {
	name := pod.Labels[LabelVMName]
	if name == "" {
		name = strings.TrimPrefix(pod.Name, "virt-launcher-")
	}
	ref := pod.Namespace + "/" + name
	switch {
	case pod.Spec.NodeName == "":
		return VM{}, ref + ": launcher pod " + pod.Name + " not scheduled"
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		return VM{}, ref + ": launcher pod " + pod.Name + " " + string(pod.Status.Phase)
	}
	nads := qos.PodNADs(pod)
	if len(nads) == 0 {
		return VM{}, fmt.Sprintf("%s: launcher pod %s: no multus network in its %s annotation", ref, pod.Name, nadv1.NetworksAnnotation)
	}
	net, ok := nets[nads[0]]
	if !ok {
		return VM{}, fmt.Sprintf("%s: launcher pod %s: NAD %s is no localnet network of the cluster", ref, pod.Name, nads[0])
	}
	ns, nad, _ := strings.Cut(nads[0], "/")
	vm := VM{Ref: ref, Namespace: pod.Namespace, Name: name, Node: pod.Spec.NodeName, Network: net.Name, Switch: net.Switch,
		Port: qos.LogicalPortName(ns, nad, pod.Namespace, pod.Name), Addrs: addrs[ref]}
	if len(vm.Addrs) == 0 {
		vm.Addrs = podNetworkAddrs(pod, nads[0])
	}
	if len(vm.Addrs) == 0 {
		vm.Unknown = true
	}
	return vm, ""
}

// podNetworkAddrs are the addresses ovnkube's pod-networks annotation
// gives the NAD (networks with IPAM only).
func podNetworkAddrs(pod *corev1.Pod, nad string) []netip.Prefix {
	var pn map[string]struct {
		IPAddresses []string `json:"ip_addresses"`
	}
	if json.Unmarshal([]byte(pod.Annotations[podNetworksKey]), &pn) != nil {
		return nil
	}
	return prefixes(pn[nad].IPAddresses...)
}
