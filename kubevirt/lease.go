package kubevirt

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// publishLease writes attachment i's DHCP lease into the launcher pod's
// k8s.ovn.org/pod-networks entry (ip_addresses, ip_address), as the CNI
// does on a DHCP-IPAM localnet network once the guest holds a lease: that
// is where NetworkQoS destination selectors find the pod's address.
func (m *Manager) publishLease(ctx context.Context, in *instance, i int) error {
	if m.kube == nil || in.pod == "" {
		return nil
	}
	a := in.atts[i]
	pods := m.kube.CoreV1().Pods(in.vm.Namespace)
	pod, err := pods.Get(ctx, in.pod, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("VM %s/%s: read pod %s: %w", in.vm.Namespace, in.vm.Name, in.pod, err)
	}
	nets := map[string]podNetwork{}
	if raw := pod.Annotations[PodNetworksAnnotation]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &nets); err != nil {
			return fmt.Errorf("VM %s/%s: pod %s: %s: %w", in.vm.Namespace, in.vm.Name, in.pod, PodNetworksAnnotation, err)
		}
	}
	key := a.NADNamespace + "/" + a.NADName
	pn := nets[key]
	pn.MACAddress, pn.Role = a.MAC, "secondary"
	pn.IPAddresses, pn.IPAddress = []string{a.IPv4Lease}, a.IPv4Lease
	nets[key] = pn
	value, err := json.Marshal(nets)
	if err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{PodNetworksAnnotation: string(value)}}})
	if err != nil {
		return err
	}
	if _, err := pods.Patch(ctx, in.pod, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("VM %s/%s: publish lease %s on pod %s: %w", in.vm.Namespace, in.vm.Name, a.IPv4Lease, in.pod, err)
	}
	return nil
}
