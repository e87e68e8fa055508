package localnet

import (
	"strings"
	"testing"
)

const cudnManifests = `apiVersion: v1
kind: Namespace
metadata: {name: red, labels: {tenant: red}}
---
apiVersion: v1
kind: Namespace
metadata: {name: blue, labels: {tenant: blue}}
---
apiVersion: k8s.ovn.org/v1
kind: ClusterUserDefinedNetwork
metadata: {name: red-net}
spec:
  namespaceSelector: {matchLabels: {tenant: red}}
  network:
    topology: Localnet
    localnet:
      role: Secondary
      physicalNetworkName: physnet
      ipam: {mode: Disabled}
      vlan: {mode: Access, access: {id: 300}}
---
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata: {name: dhcp-net, namespace: blue}
spec:
  config: '{"cniVersion":"1.0.0","name":"dhcp-net","type":"ovn-k8s-cni-overlay","topology":"localnet","physicalNetworkName":"physnet2","vlanID":200,"ipam":{"type":"dhcp"},"netAttachDefName":"blue/dhcp-net"}'
`

func TestNetworksFromManifests(t *testing.T) {
	ns, err := NetworksFromManifests(strings.NewReader(cudnManifests), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 2 {
		t.Fatalf("%d networks, want 2", len(ns))
	}
	red, dhcp := ns[0], ns[1]
	if red.Name != "cluster_udn_red-net" || red.Switch != "cluster_udn_red.net_ovn_localnet_switch" || red.VLAN != 300 ||
		strings.Join(red.NADs, ",") != "red/red-net" || red.CUDN == nil || red.DiscoverablePodIPs() {
		t.Errorf("CUDN network %+v", red.Network)
	}
	if len(red.Namespaces) != 1 || red.Namespaces[0].Labels["tenant"] != "red" {
		t.Errorf("CUDN network namespaces %v", red.Namespaces)
	}
	if own := red.NADObjects[0].OwnerReferences; len(own) != 1 || own[0].Kind != "ClusterUserDefinedNetwork" || own[0].Name != "red-net" {
		t.Errorf("rendered NAD owner %+v", own)
	}
	if dhcp.Name != "dhcp-net" || dhcp.IPAMType != "dhcp" || !dhcp.DiscoverablePodIPs() || dhcp.VLAN != 200 {
		t.Errorf("DHCP network %+v", dhcp.Network)
	}
	s := Spec{Networks: ns}
	if got := s.bridgeMappings(); got != "physnet2:br-phys,physnet:br-phys" {
		t.Errorf("bridge mappings %q", got)
	}
}

func TestNetworksFromManifestsErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"layer2 NAD", `apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata: {name: l2, namespace: a}
spec: {config: '{"name":"l2","type":"ovn-k8s-cni-overlay","topology":"layer2"}'}
`, "NAD a/l2: topology"},
		{"CUDN selects nothing", `apiVersion: k8s.ovn.org/v1
kind: ClusterUserDefinedNetwork
metadata: {name: x}
spec:
  namespaceSelector: {matchLabels: {a: b}}
  network: {topology: Localnet, localnet: {role: Secondary, physicalNetworkName: p}}
`, "ClusterUserDefinedNetwork x: spec.namespaceSelector"},
		{"conflicting NADs", `apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata: {name: nn, namespace: a}
spec: {config: '{"name":"n","type":"ovn-k8s-cni-overlay","topology":"localnet","physicalNetworkName":"p","vlanID":1}'}
---
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata: {name: nn, namespace: b}
spec: {config: '{"name":"n","type":"ovn-k8s-cni-overlay","topology":"localnet","physicalNetworkName":"p","vlanID":2}'}
`, "NAD b/nn: network n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NetworksFromManifests(strings.NewReader(tc.yaml), "bad.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "bad.yaml") {
				t.Fatalf("error %v, want one naming bad.yaml and %q", err, tc.want)
			}
		})
	}
}
