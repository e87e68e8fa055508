package scenarios

import (
	"os"
	"strings"
	"testing"
)

// vmBase is a scenario whose topology comes from a CUDN, an NNCP and
// VirtualMachine manifests.
const vmBase = `name: vm-base
title: manifests topology
topology:
  nodes: 2
  hosts:
    - {name: ext, network: cluster_udn_blue, addresses: {v4: 10.10.0.100/16}}
    - {name: dhcp, network: cluster_udn_blue, addresses: {v4: 10.10.0.2/16}, dhcpRange: "10.10.2.100,10.10.2.200"}
manifests:
  ns:
    apiVersion: v1
    kind: Namespace
    metadata: {name: vms, labels: {vlan: "100"}}
  blue:
    apiVersion: k8s.ovn.org/v1
    kind: ClusterUserDefinedNetwork
    metadata: {name: blue, labels: {net: blue}}
    spec:
      namespaceSelector: {matchLabels: {vlan: "100"}}
      network:
        topology: Localnet
        localnet: {role: Secondary, physicalNetworkName: physnet, ipam: {mode: Disabled}, vlan: {mode: Access, access: {id: 100}}}
  nncp:
    apiVersion: nmstate.io/v1
    kind: NodeNetworkConfigurationPolicy
    metadata: {name: map}
    spec:
      desiredState: {ovn: {bridge-mappings: [{localnet: physnet, bridge: br1}]}}
  svc:
    apiVersion: v1
    kind: Service
    metadata: {name: web, namespace: vms}
  vm-a:
    apiVersion: kubevirt.io/v1
    kind: VirtualMachine
    metadata: {name: vm-a, namespace: vms}
    spec:
      runStrategy: Always
      template:
        metadata: {labels: {tier: gold}}
        spec:
          nodeSelector: {kubernetes.io/hostname: node1}
          domain: {devices: {interfaces: [{name: nic, bridge: {}, macAddress: "02:00:00:00:00:0a"}]}}
          networks: [{name: nic, multus: {networkName: blue}}]
          volumes: [{name: ci, cloudInitNoCloud: {networkData: "version: 2\nethernets: {eth0: {addresses: [10.10.0.11/16]}}"}}]
  vm-b:
    apiVersion: kubevirt.io/v1
    kind: VirtualMachine
    metadata: {name: vm-b, namespace: vms}
    spec:
      running: false
      template:
        spec:
          domain: {devices: {interfaces: [{name: nic, bridge: {}}]}}
          networks: [{name: nic, multus: {networkName: blue}}]
flows:
  - {name: f, from: vm-a, to: ext, protocol: udp, tool: packets, rate: 10M, duration: 1s, expect: [{unmarked: true}]}
steps:
  - apply: [ns, blue]
  - start: [f]
  - stop: [f]
`

func TestManifestTopology(t *testing.T) {
	sc, err := Parse([]byte(vmBase), "vm-base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	nets := sc.Topology.Networks
	if len(nets) != 1 || nets[0] != (Network{Name: "cluster_udn_blue", Manifest: "blue", VLAN: 100, IPAM: IPAMNone}) {
		t.Fatalf("networks = %+v", nets)
	}
	want := []VM{
		{Name: "vm-a", Namespace: "vms", Node: 0, Network: "cluster_udn_blue", Labels: map[string]string{"tier": "gold"},
			Addresses: Addresses{V4: "10.10.0.11/16"}, MAC: "02:00:00:00:00:0a", Manifest: "vm-a"},
		{Name: "vm-b", Namespace: "vms", Node: 1, Network: "cluster_udn_blue", DHCP: true, Late: true, Manifest: "vm-b"},
	}
	if len(sc.Topology.VMs) != 2 {
		t.Fatalf("VMs = %+v", sc.Topology.VMs)
	}
	for i, w := range want {
		g := sc.Topology.VMs[i]
		if g.Name != w.Name || g.Node != w.Node || g.Network != w.Network || g.MAC != w.MAC || g.DHCP != w.DHCP ||
			g.Late != w.Late || g.Addresses != w.Addresses || g.Manifest != w.Manifest || g.Labels["tier"] != w.Labels["tier"] {
			t.Errorf("VM %d = %+v, want %+v", i, g, w)
		}
	}
	if len(sc.Notes) != 1 || !strings.Contains(sc.Notes[0], "ignored: Service vms/web") {
		t.Fatalf("notes = %q, want the ignored Service listed", sc.Notes)
	}
}

func TestManifestTopologyErrors(t *testing.T) {
	for _, tc := range []struct{ name, old, new, want string }{
		{"vm-not-mapped-on-node", "      desiredState: {", "      nodeSelector: {kubernetes.io/hostname: node2}\n      desiredState: {",
			`vm-base.yaml:34: manifests.vm-a.spec.template.spec.nodeSelector: VirtualMachine vms/vm-a would not start: 0/2 nodes are available: 1 node(s) didn't map localnet "physnet" (no NodeNetworkConfigurationPolicy bridge-mapping), 1 node(s) didn't match Pod's node affinity/selector. (nodeSelector {kubernetes.io/hostname=node1}; nodes: node1{node-role.kubernetes.io/worker=}, node2{node-role.kubernetes.io/worker=}); a startFails check states a VM that cannot start`},
		{"vm-selector-no-node", "nodeSelector: {kubernetes.io/hostname: node1}", "nodeSelector: {kubernetes.io/hostname: node7}",
			"manifests.vm-a.spec.template.spec.nodeSelector: VirtualMachine vms/vm-a would not start: 0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. (nodeSelector {kubernetes.io/hostname=node7}; nodes: node1{node-role.kubernetes.io/worker=}, node2{node-role.kubernetes.io/worker=})"},
		{"vm-applied", "  - apply: [ns, blue]", "  - apply: [ns, blue, vm-a]",
			`steps[0].apply[2]: manifest "vm-a" is a VirtualMachine: it shapes the topology at boot and is not applied`},
		{"ignored-applied", "  - apply: [ns, blue]", "  - apply: [ns, blue, svc]",
			`steps[0].apply[2]: manifest "svc" is a Service, a kind the testbed does not model`},
		{"vm-bad-field", "runStrategy: Always", "runStrategy: Sometimes",
			`manifests.vm-a.spec.runStrategy: VirtualMachine vms/vm-a: "Sometimes", want Always`},
		{"vm-unknown-nad", "networks: [{name: nic, multus: {networkName: blue}}]\n          volumes", "networks: [{name: nic, multus: {networkName: red}}]\n          volumes",
			"manifests.vm-a.spec.template.spec.networks[0].multus.networkName: VirtualMachine vms/vm-a: NAD vms/red"},
		{"vm-second-nic-dhcp", "interfaces: [{name: nic, bridge: {}, macAddress: \"02:00:00:00:00:0a\"}]}}\n          networks: [{name: nic, multus: {networkName: blue}}]",
			"interfaces: [{name: nic, bridge: {}}, {name: nic2, bridge: {}}]}}\n          networks: [{name: nic, multus: {networkName: blue}}, {name: nic2, multus: {networkName: blue}}]",
			"manifests.vm-a.spec.template.spec.networks[1]: VirtualMachine vms/vm-a: NIC 1 takes DHCP; the testbed runs DHCP on a VM's first NIC only"},
		{"cudn-bad-vlan", "access: {id: 100}", "access: {id: 0}",
			"manifests.blue.spec.network.localnet.vlan.access.id: ClusterUserDefinedNetwork blue: 0 out of range 1..4094"},
		{"nncp-bad-state", "bridge: br1}", "bridge: br1, state: maybe}",
			`manifests.nncp.spec.desiredState.ovn.bridge-mappings[0].state: NodeNetworkConfigurationPolicy map: "maybe"`},
		{"dhcp-vm-without-server", `, dhcpRange: "10.10.2.100,10.10.2.200"`, "",
			`manifests.vm-b: VM "vm-b" takes its IPv4 address from DHCP (no static address), but no host on network "cluster_udn_blue" has a dhcpRange`},
		{"dhcp-range-outside", `dhcpRange: "10.10.2.100,10.10.2.200"`, `dhcpRange: "10.11.2.100,10.11.2.200"`,
			`topology.hosts[1].dhcpRange: host "dhcp": "10.11.2.100,10.11.2.200" is not inside the host's subnet 10.10.0.0/16`},
		{"dhcp-range-form", `dhcpRange: "10.10.2.100,10.10.2.200"`, `dhcpRange: "10.10.2.100-10.10.2.200"`,
			`want "first,last" IPv4 addresses`},
		{"dhcp-range-own-address", `dhcpRange: "10.10.2.100,10.10.2.200"`, `dhcpRange: "10.10.0.1,10.10.0.9"`,
			`contains the server's own address 10.10.0.2`},
		{"vm-duplicate-of-shorthand", "  hosts:\n", "  vms:\n    - {name: vm-a, namespace: vms, network: cluster_udn_blue}\n  hosts:\n",
			`duplicate VM/host name "vm-a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantParseError(t, vmBase, "vm-base.yaml", tc.old, tc.new, tc.want)
		})
	}
}

// TestMultiNICVM: a VirtualMachine with two multus NICs becomes one VM
// with a NIC per network; flows leave through the NIC on their peer's
// network, or the one they name.
func TestMultiNICVM(t *testing.T) {
	sc, err := Load(os.DirFS("."), "19-multi-nic-vm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	db := sc.VM("db-1")
	if db == nil || db.Network != "tenant-blue" || len(db.More) != 1 || db.More[0].Network != "storage" ||
		db.More[0].Addresses != (Addresses{V4: "10.60.0.11/16", V6: "fd00:60::11/64"}) {
		t.Fatalf("db-1: %+v", db)
	}
	for flow, want := range map[string]string{"tenant-nic": "tenant-blue", "storage-nic": "storage", "vm-to-vm-storage": "storage"} {
		if got := sc.FlowNetwork(sc.Flow(flow)); got != want {
			t.Errorf("flow %s crosses %q, want %q", flow, got, want)
		}
	}
	if i, _, ok := db.NIC("storage"); !ok || i != 1 {
		t.Errorf("db-1's storage NIC: %d %v, want 1", i, ok)
	}
	bad := strings.Replace(string(mustRead(t, "19-multi-nic-vm.yaml")), "    network: storage\n", "    network: tenant-green\n", 1)
	if _, err := Parse([]byte(bad), "bad.yaml"); err == nil || !strings.Contains(err.Error(), `flows[3].network: "db-1" and "app-1" do not both have a NIC on network "tenant-green"`) {
		t.Errorf("flow over a network the VMs do not share: %v", err)
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
