package kubevirt

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// checkLeaseAnnotation asserts that the VM's launcher pod carries its
// DHCP lease in the pod-networks entry of nad.
func checkLeaseAnnotation(t *testing.T, kube kubernetes.Interface, m *Manager, ns, name, nad string) {
	t.Helper()
	in, err := m.Get(ns, name)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := kube.CoreV1().Pods(ns).Get(context.Background(), in.Pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var nets map[string]podNetwork
	if err := json.Unmarshal([]byte(pod.Annotations[PodNetworksAnnotation]), &nets); err != nil {
		t.Fatalf("pod %s: %s: %v", in.Pod, PodNetworksAnnotation, err)
	}
	got := nets[nad]
	if !slices.Equal(got.IPAddresses, []string{in.Leases[0]}) || got.IPAddress != in.Leases[0] || got.MACAddress == "" {
		t.Fatalf("pod-networks[%s] = %+v, want the lease %s", nad, got, in.Leases[0])
	}
}
