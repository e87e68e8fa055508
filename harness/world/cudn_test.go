package world

import (
	"fmt"
	"slices"
	"testing"

	"github.com/nqos/nqos/scenarios"
)

// cudnScenario renders one CUDN into two namespaces; a NetworkQoS selects
// it by clusterUserDefinedNetworkSelector.
var cudnScenario = fmt.Sprintf(`name: cudn-intent
title: CUDN intent
topology:
  nodes: 2
  hosts:
    - {name: ext, network: cluster_udn_blue, addresses: {v4: 10.10.0.100/16}}
manifests:
  ns-a: {apiVersion: v1, kind: Namespace, metadata: {name: team-a, labels: {vlan: "100"}}}
  ns-b: {apiVersion: v1, kind: Namespace, metadata: {name: team-b, labels: {vlan: "100"}}}
  blue:
    apiVersion: k8s.ovn.org/v1
    kind: ClusterUserDefinedNetwork
    metadata: {name: blue, labels: {net: blue}}
    spec:
      namespaceSelector: {matchLabels: {vlan: "100"}}
      network: {topology: Localnet, localnet: {role: Secondary, physicalNetworkName: physnet, ipam: {mode: Disabled}, vlan: {mode: Access, access: {id: 100}}}}
  gold:
    apiVersion: k8s.ovn.org/v1alpha1
    kind: NetworkQoS
    metadata: {name: gold, namespace: team-a}
    spec:
      networkSelectors:
        - networkSelectionType: ClusterUserDefinedNetworks
          clusterUserDefinedNetworkSelector: {networkSelector: {matchLabels: {net: blue}}}
      podSelector: {}
      priority: 50
      egress: [{dscp: 46}]
%s%sflows:
  - {name: f, from: a1, to: ext, protocol: udp, tool: packets, rate: 10M, duration: 1s, expect: [{dscp: 46}]}
steps:
  - apply: [ns-a, ns-b, blue, gold]
  - start: [f]
  - stop: [f]
`, cudnVM("vm-a", "a1", "team-a", "10.10.0.11/16"), cudnVM("vm-b", "b1", "team-b", "10.10.0.12/16"))

// cudnVM is a VirtualMachine manifest on the CUDN with a static address.
func cudnVM(id, name, ns, addr string) string {
	return fmt.Sprintf(`  %s:
    apiVersion: kubevirt.io/v1
    kind: VirtualMachine
    metadata: {name: %s, namespace: %s}
    spec:
      runStrategy: Always
      template:
        spec:
          domain: {devices: {interfaces: [{name: n, bridge: {}}]}}
          networks: [{name: n, multus: {networkName: blue}}]
          volumes: [{name: ci, cloudInitNoCloud: {networkData: "version: 2\nethernets: {eth0: {addresses: [%s]}}"}}]
`, id, name, ns, addr)
}

// TestIntentOnCUDN: the intent of a CUDN network has the NetworkQoS rows,
// and the port group holds the team-a VM's port on the NAD the CUDN
// renders in team-a (the object is namespaced: team-b's VM is not in it).
func TestIntentOnCUDN(t *testing.T) {
	sc, err := scenarios.Parse([]byte(cudnScenario), "cudn.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w := New(sc)
	for _, m := range sc.Manifests {
		if !m.Topological() {
			w.Apply(m)
		}
	}
	d, err := w.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if len(d.QoS) != 1 || d.QoS[0].Action.DSCP != 46 {
		t.Fatalf("QoS rows = %+v, want one DSCP 46 row on the CUDN's switch", d.QoS)
	}
	if len(d.PortGroups) != 1 || !slices.Equal(d.PortGroups[0].Ports, []string{w.Port(sc.VM("a1"))}) {
		t.Fatalf("port groups = %+v, want team-a's VM port %s", d.PortGroups, w.Port(sc.VM("a1")))
	}
}
