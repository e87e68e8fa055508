package kubevirt

import (
	"encoding/json"
	"strings"
	"testing"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
)

func TestVMValidate(t *testing.T) {
	ok := VM{Name: "vm1", Namespace: "vms", Node: "node1", Interfaces: []Interface{{NAD: "tenant-blue", MAC: "02:00:00:00:00:01", IPv4: "10.20.1.1/16"}}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*VM)
		want string
	}{
		{"bad name", func(v *VM) { v.Name = "VM_1" }, `VM "VM_1": name`},
		{"no node", func(v *VM) { v.Node = "" }, "vms/vm1: node"},
		{"no interfaces", func(v *VM) { v.Interfaces = nil }, "interfaces: need 1-4"},
		{"multicast MAC", func(v *VM) { v.Interfaces[0].MAC = "01:00:00:00:00:01" }, "interfaces[0].mac"},
		{"v6 in ipv4", func(v *VM) { v.Interfaces[0].IPv4 = "fd00::1/64" }, "interfaces[0].ipv4"},
		{"no prefix", func(v *VM) { v.Interfaces[0].IPv6 = "fd00::1" }, "interfaces[0].ipv6"},
		{"dhcp and static", func(v *VM) { v.Interfaces[0].DHCP = true }, "interfaces[0].dhcp"},
		{"no nad", func(v *VM) { v.Interfaces[0].NAD = "" }, "interfaces[0].nad"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vm := ok
			vm.Interfaces = append([]Interface(nil), ok.Interfaces...)
			tc.edit(&vm)
			if err := vm.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestLauncherPod(t *testing.T) {
	vm := VM{Name: "vm1", Namespace: "vms", Labels: map[string]string{"tier": "production"}, Node: "node1"}
	atts := []attachment{
		{Interface: Interface{MAC: "02:00:00:00:00:01", IPv4: "10.20.1.1/16"}, NADNamespace: "vms", NADName: "tenant-blue"},
		{Interface: Interface{MAC: "02:00:00:00:00:02", IPv4: "10.40.0.5/24"}, NADNamespace: "infra", NADName: "ipam-net", Subnets: []string{"10.40.0.0/24"}},
	}
	name, err := launcherName("vm1")
	if err != nil || !strings.HasPrefix(name, "virt-launcher-vm1-") || len(name) != len("virt-launcher-vm1-")+5 {
		t.Fatalf("launcher name %q (%v)", name, err)
	}
	pod, err := launcherPod(vm, name, "node2", atts, "", true)
	if err != nil {
		t.Fatal(err)
	}
	if c := pod.Spec.Containers[0]; c.Image != "quay.io/kubevirt/virt-launcher:v1.6.0" || len(c.Command) != 1 {
		t.Errorf("container without a node image: %s %v, want KubeVirt's launcher", c.Image, c.Command)
	}
	onNode, err := launcherPod(vm, name, "node2", atts, "registry.k8s.io/pause:3.10.2", true)
	if err != nil {
		t.Fatal(err)
	}
	if c := onNode.Spec.Containers[0]; c.Image != "registry.k8s.io/pause:3.10.2" || c.ImagePullPolicy != "Never" || len(c.Command) != 0 {
		t.Errorf("container with a node image: %s %s %v, want that image, never pulled, its own entrypoint", c.Image, c.ImagePullPolicy, c.Command)
	}
	if pod.Spec.NodeName != "node2" || pod.Labels["tier"] != "production" || pod.Labels["kubevirt.io"] != "virt-launcher" || pod.Labels["vm.kubevirt.io/name"] != "vm1" {
		t.Fatalf("pod %+v", pod.ObjectMeta)
	}
	if vm.Labels["kubevirt.io"] != "" {
		t.Fatal("launcherPod modified the VM's labels")
	}
	wantNets := `[{"name":"tenant-blue","namespace":"vms","mac":"02:00:00:00:00:01","interface":"pod1"},{"name":"ipam-net","namespace":"infra","mac":"02:00:00:00:00:02","interface":"pod2"}]`
	if got := pod.Annotations[nadv1.NetworksAnnotation]; got != wantNets {
		t.Errorf("networks annotation\n got %s\nwant %s", got, wantNets)
	}
	var pn map[string]podNetwork
	if err := json.Unmarshal([]byte(pod.Annotations[PodNetworksAnnotation]), &pn); err != nil {
		t.Fatal(err)
	}
	if ipamless := pn["vms/tenant-blue"]; ipamless.MACAddress != "02:00:00:00:00:01" || len(ipamless.IPAddresses) != 0 {
		t.Errorf("ipamless entry %+v: MAC only", ipamless)
	}
	if ipam := pn["infra/ipam-net"]; len(ipam.IPAddresses) != 1 || ipam.IPAddresses[0] != "10.40.0.5/24" || ipam.Role != "secondary" {
		t.Errorf("IPAM entry %+v", ipam)
	}
	byOVNKube, err := launcherPod(vm, name, "node2", atts, "registry.k8s.io/pause:3.10.2", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := byOVNKube.Annotations[PodNetworksAnnotation]; ok || byOVNKube.Annotations[nadv1.NetworksAnnotation] != wantNets {
		t.Errorf("pod where ovnkube annotates: %v, want the networks annotation alone", byOVNKube.Annotations)
	}
}

func TestGuestName(t *testing.T) {
	if GuestName("vms", "vm1") != "vms-vm1" || GuestName("default", "vm1") != "vm1" {
		t.Fatal("GuestName")
	}
	if NICName(1) != "eth1" {
		t.Fatal("NICName")
	}
}
