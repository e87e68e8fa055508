package kubevirt

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
)

// Pod labels and annotations KubeVirt and ovnkube put on a launcher pod.
const (
	LabelKubeVirt         = "kubevirt.io"
	LabelVMName           = "vm.kubevirt.io/name"
	LauncherLabelValue    = "virt-launcher"
	PodNetworksAnnotation = "k8s.ovn.org/pod-networks"
)

// launcherName is "virt-launcher-<vm>-<5 random [a-z0-9]>".
func launcherName(vm string) (string, error) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 5)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("VM %s: launcher name: %w", vm, err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "virt-launcher-" + vm + "-" + string(b), nil
}

// multusEntry is one element of k8s.v1.cni.cncf.io/networks.
type multusEntry struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	MAC       string `json:"mac,omitempty"`
	Interface string `json:"interface,omitempty"`
}

// podNetwork is one value of k8s.ovn.org/pod-networks.
type podNetwork struct {
	IPAddresses []string `json:"ip_addresses,omitempty"`
	MACAddress  string   `json:"mac_address"`
	IPAddress   string   `json:"ip_address,omitempty"`
	Role        string   `json:"role"`
}

// attachment is an interface resolved to its network.
type attachment struct {
	Interface
	NADNamespace, NADName string
	Switch, Network       string
	Subnets               []string
	NIC                   string
	// IPv4Lease is the DHCP lease the guest got ("" without DHCP).
	IPv4Lease string
}

// ovnIPs are the interface addresses OVN knows: only on networks with
// subnets (ipamless networks carry the MAC alone).
func (a attachment) ovnIPs() []string {
	if len(a.Subnets) == 0 {
		return nil
	}
	var out []string
	for _, c := range []string{a.IPv4, a.IPv6} {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// launcherPod builds the virt-launcher pod of vm on node. With an image
// the pod runs it as present on the node (no pull, its own entrypoint):
// where a kubelet really runs the pod; without, it names KubeVirt's. The
// networks annotation asks for each interface's MAC; podNetworks writes
// k8s.ovn.org/pod-networks too, as ovnkube would (where ovnkube runs, it
// writes it itself).
func launcherPod(vm VM, name, node string, atts []attachment, image string, podNetworks bool) (*corev1.Pod, error) {
	labels := maps.Clone(vm.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelKubeVirt] = LauncherLabelValue
	labels[LabelVMName] = vm.Name
	var multus []multusEntry
	podNets := map[string]podNetwork{}
	for i, a := range atts {
		multus = append(multus, multusEntry{Name: a.NADName, Namespace: a.NADNamespace, MAC: a.MAC, Interface: fmt.Sprintf("pod%d", i+1)})
		pn := podNetwork{MACAddress: a.MAC, Role: "secondary", IPAddresses: a.ovnIPs()}
		if len(pn.IPAddresses) > 0 {
			pn.IPAddress = pn.IPAddresses[0]
		}
		podNets[a.NADNamespace+"/"+a.NADName] = pn
	}
	mj, err := json.Marshal(multus)
	if err != nil {
		return nil, err
	}
	pj, err := json.Marshal(podNets)
	if err != nil {
		return nil, err
	}
	c := corev1.Container{Name: "compute", Image: "quay.io/kubevirt/virt-launcher:v1.6.0", Command: []string{"/usr/bin/virt-launcher-monitor"}}
	if image != "" {
		c = corev1.Container{Name: "compute", Image: image, ImagePullPolicy: corev1.PullNever}
	}
	annotations := map[string]string{nadv1.NetworksAnnotation: string(mj)}
	if podNetworks {
		annotations[PodNetworksAnnotation] = string(pj)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: vm.Namespace, Labels: labels, Annotations: annotations},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{c}},
	}, nil
}

// prefixAddr strips the prefix length of a CIDR.
func prefixAddr(cidr string) string {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return ""
	}
	return p.Addr().String()
}
