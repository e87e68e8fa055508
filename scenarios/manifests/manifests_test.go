package manifests

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const okepSet = `
apiVersion: v1
kind: Namespace
metadata: {name: vms, labels: {provider-network-vlan: "100"}}
---
apiVersion: v1
kind: Namespace
metadata: {name: other}
---
apiVersion: nmstate.io/v1
kind: NodeNetworkConfigurationPolicy
metadata: {name: network-config}
spec:
  nodeSelector: {kubernetes.io/hostname: node0}
  desiredState:
    interfaces: [{name: br1, type: ovs-bridge, state: up}]
    ovn:
      bridge-mappings:
      - {localnet: provider-network, bridge: br1, state: present}
---
apiVersion: k8s.ovn.org/v1
kind: ClusterUserDefinedNetwork
metadata: {name: provider-network-100, labels: {nqos-network: tenant-blue}}
spec:
  namespaceSelector: {matchLabels: {provider-network-vlan: "100"}}
  network:
    topology: Localnet
    localnet:
      role: Secondary
      physicalNetworkName: provider-network
      ipam: {mode: Disabled}
      vlan: {mode: Access, access: {id: 100}}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: prod-1, namespace: vms}
spec:
  runStrategy: Always
  template:
    metadata: {labels: {tier: production}}
    spec:
      domain:
        cpu: {cores: 1}
        devices:
          interfaces:
          - {name: default, masquerade: {}}
          - {name: provider-network, bridge: {}, macAddress: "02:00:00:00:00:11"}
      networks:
      - {name: default, pod: {}}
      - {name: provider-network, multus: {networkName: provider-network-100}}
      volumes:
      - name: cloudinitdisk
        cloudInitNoCloud:
          networkData: |
            version: 2
            ethernets:
              eth1:
                addresses: [10.10.0.11/16, "fd00:10::11/64"]
                gateway4: 10.10.0.1
                gateway6: "fd00:10::1"
                routes: [{to: 10.30.0.0/16, via: 10.10.0.254}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: vms}
`

func decode(t *testing.T, text string) *Set {
	t.Helper()
	objs, err := ReadBytes([]byte(text), "in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Decode(objs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDecodeOKEPSet(t *testing.T) {
	s := decode(t, okepSet)
	if got := s.IgnoredRefs(); len(got) != 1 || !strings.HasPrefix(got[0], "Service vms/web") {
		t.Fatalf("ignored = %v, want the Service", got)
	}
	if len(s.VMs) != 1 {
		t.Fatalf("VMs = %d", len(s.VMs))
	}
	vm := s.VMs[0]
	want := []NIC{{Name: "provider-network", Index: 1, NetworkIndex: 1, NAD: "vms/provider-network-100", MAC: "02:00:00:00:00:11",
		IPv4: "10.10.0.11/16", IPv6: "fd00:10::11/64", Routes: []Route{
			{To: netip.MustParsePrefix("0.0.0.0/0"), Via: netip.MustParseAddr("10.10.0.1")},
			{To: netip.MustParsePrefix("::/0"), Via: netip.MustParseAddr("fd00:10::1")},
			{To: netip.MustParsePrefix("10.30.0.0/16"), Via: netip.MustParseAddr("10.10.0.254")}}}}
	if d := cmp.Diff(want, vm.NICs, netipEqual...); d != "" || !vm.Running || vm.Labels["tier"] != "production" {
		t.Fatalf("VM = %+v running=%v; NIC diff (-want +got):\n%s", vm, vm.Running, d)
	}
	nads, err := s.AllNADs()
	if err != nil {
		t.Fatal(err)
	}
	if len(nads) != 1 || nads[0].Namespace != "vms" || nads[0].Name != "provider-network-100" {
		t.Fatalf("rendered NADs = %+v, want one in vms", nads)
	}
	nad := nads[0]
	if nad.Labels["k8s.ovn.org/user-defined-network"] != "" || nad.Labels["nqos-network"] != "tenant-blue" || len(nad.OwnerReferences) != 1 ||
		!*nad.OwnerReferences[0].Controller || nad.OwnerReferences[0].Kind != "ClusterUserDefinedNetwork" {
		t.Fatalf("rendered NAD metadata = %+v", nad.ObjectMeta)
	}
	var conf map[string]any
	if err := json.Unmarshal([]byte(nad.Spec.Config), &conf); err != nil {
		t.Fatal(err)
	}
	wantConf := map[string]any{"cniVersion": "1.0.0", "name": "cluster_udn_provider-network-100", "type": "ovn-k8s-cni-overlay",
		"topology": "localnet", "role": "secondary", "physicalNetworkName": "provider-network", "mtu": 1500.0, "vlanID": 100.0,
		"netAttachDefName": "vms/provider-network-100"}
	if d := cmp.Diff(wantConf, conf); d != "" {
		t.Fatalf("rendered config (-want +got):\n%s", d)
	}
}

func TestPlace(t *testing.T) {
	s := decode(t, okepSet)
	r, err := s.Place([]string{"node0", "node1"})
	if err != nil {
		t.Fatal(err)
	}
	if r[0].Node != "node0" || r[0].Why != "" || r[0].Networks[0].Name != "cluster_udn_provider-network-100" {
		t.Fatalf("placed = %+v, want node0 (the only node mapping provider-network)", r[0])
	}
	s.VMs[0].NodeSelector = map[string]string{LabelHostname: "node1"}
	r, err = s.Place([]string{"node0", "node1"})
	if err != nil {
		t.Fatal(err)
	}
	want := `0/2 nodes are available: 1 node(s) didn't map localnet "provider-network" (no NodeNetworkConfigurationPolicy bridge-mapping), 1 node(s) didn't match Pod's node affinity/selector.`
	if r[0].Node != "" || r[0].Why != want {
		t.Fatalf("pinned to an unmapped node: %+v, want not started with\n%s", r[0], want)
	}
	s.NNCPs = nil
	s.VMs = append(s.VMs, s.VMs[0], s.VMs[0])
	s.VMs[0] = &VirtualMachine{Object: s.VMs[1].Object, Name: "a", Namespace: "vms", NICs: s.VMs[1].NICs}
	r, err = s.Place([]string{"node0", "node1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{r[0].Node, r[1].Node, r[2].Node}; !cmp.Equal(got, []string{"node0", "node1", "node1"}) {
		t.Fatalf("spread + pinned = %v, want [node0 node1 node1]", got)
	}
}

func TestRunStrategy(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want bool
	}{
		{"runStrategy: Always", true}, {"runStrategy: RerunOnFailure", true}, {"runStrategy: Halted", false},
		{"runStrategy: Manual", false}, {"running: true", true}, {"running: false", false}, {"", false},
	} {
		s := decode(t, strings.Replace(okepSet, "runStrategy: Always", tc.spec, 1))
		if s.VMs[0].Running != tc.want {
			t.Errorf("%q: running = %v, want %v", tc.spec, s.VMs[0].Running, tc.want)
		}
	}
}

func TestDHCPNIC(t *testing.T) {
	s := decode(t, strings.Replace(okepSet, "addresses: [10.10.0.11/16, \"fd00:10::11/64\"]", "dhcp4: true\n                addresses: [\"fd00:10::11/64\"]", 1))
	if n := s.VMs[0].NICs[0]; !n.DHCP || n.IPv4 != "" {
		t.Fatalf("dhcp4 NIC = %+v", n)
	}
	noData := strings.Replace(okepSet, "eth1:", "eth9:", 1)
	if _, err := Decode(mustRead(t, noData)); err == nil || !strings.Contains(err.Error(), "ethernets.eth9: matches no multus interface") {
		t.Fatalf("eth9: err = %v", err)
	}
}

func mustRead(t *testing.T, text string) []*Object {
	t.Helper()
	objs, err := ReadBytes([]byte(text), "in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// netipEqual compares netip values by value in cmp.Diff.
var netipEqual = []cmp.Option{cmp.Comparer(func(a, b netip.Addr) bool { return a == b }),
	cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })}
