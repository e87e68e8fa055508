package qos

import (
	"encoding/json"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
)

// PodNetworksAnnotation holds OVN-Kubernetes' per-NAD pod addresses,
// which selector destinations read.
const PodNetworksAnnotation = "k8s.ovn.org/pod-networks"

const podNetworksAnnotation = PodNetworksAnnotation

// attachment is one NAD a pod attaches to.
type attachment struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// key is the "ns/name" of the NAD.
func (a attachment) key() string { return a.Namespace + "/" + a.Name }

// eligible reports whether a pod has, or will get, a logical switch port
// from ovnkube and so can be a QoS source or destination: scheduled
// (spec.nodeName set), not host-networked, not finished, not being
// deleted. ovnkube creates no LSP for the others, so a port group waiting
// for theirs would wait forever.
func eligible(p *corev1.Pod) bool {
	return p.Spec.NodeName != "" && !p.Spec.HostNetwork && p.DeletionTimestamp == nil &&
		p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// podAttachments parses the multus networks annotation: a comma-separated
// list of "name", "ns/name" (each optionally "@iface"), or a JSON list of
// {name, namespace}. The NAD namespace defaults to the pod's. Unparsable
// entries are skipped: multus would not attach the pod either.
func podAttachments(p *corev1.Pod) []attachment {
	v := strings.TrimSpace(p.Annotations[nadv1.NetworksAnnotation])
	if v == "" {
		return nil
	}
	var out []attachment
	if strings.HasPrefix(v, "[") {
		if err := json.Unmarshal([]byte(v), &out); err != nil {
			return nil
		}
	} else {
		for _, item := range strings.Split(v, ",") {
			item = strings.TrimSpace(item)
			if at := strings.IndexByte(item, '@'); at >= 0 {
				item = item[:at]
			}
			a := attachment{Name: item}
			if ns, name, ok := strings.Cut(item, "/"); ok {
				a = attachment{Namespace: ns, Name: name}
			}
			out = append(out, a)
		}
	}
	valid := out[:0]
	for _, a := range out {
		if a.Namespace == "" {
			a.Namespace = p.Namespace
		}
		if a.Name != "" && !strings.Contains(a.Name, "/") {
			valid = append(valid, a)
		}
	}
	return valid
}

// podPorts returns the sorted, unique LSP names of a pod on a network.
func podPorts(p *corev1.Pod, nads map[string]bool) []string {
	var ports []string
	for _, a := range podAttachments(p) {
		if nads[a.key()] {
			ports = append(ports, LogicalPortName(a.Namespace, a.Name, p.Namespace, p.Name))
		}
	}
	return sortUnique(ports)
}

// podNetwork is one entry of the pod-networks annotation.
type podNetwork struct {
	IPAddresses []string `json:"ip_addresses"`
	IPAddress   string   `json:"ip_address"`
}

// podIPs returns the addresses (without prefix length) a pod has on a
// network, read from the pod-networks entries of the network's NADs.
func podIPs(p *corev1.Pod, nads map[string]bool) []netip.Addr {
	raw := p.Annotations[podNetworksAnnotation]
	if raw == "" {
		return nil
	}
	var entries map[string]podNetwork
	if err := json.Unmarshal([]byte(raw), &entries); err != nil {
		return nil
	}
	var out []netip.Addr
	for key, e := range entries {
		if !nads[key] {
			continue
		}
		addrs := e.IPAddresses
		if len(addrs) == 0 && e.IPAddress != "" {
			addrs = []string{e.IPAddress}
		}
		for _, s := range addrs {
			if a, ok := parseAddr(s); ok {
				out = append(out, a)
			}
		}
	}
	return out
}

// parseAddr accepts "ip" or "ip/len" and returns the address.
func parseAddr(s string) (netip.Addr, bool) {
	if pfx, err := netip.ParsePrefix(s); err == nil {
		return pfx.Addr().Unmap(), true
	}
	a, err := netip.ParseAddr(s)
	return a.Unmap(), err == nil && a.Zone() == ""
}

func sortUnique(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
