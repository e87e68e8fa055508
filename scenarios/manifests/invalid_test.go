package manifests

import (
	"strings"
	"testing"
)

// TestInvalid refuses each invalid object naming the file, the object and
// the field.
func TestInvalid(t *testing.T) {
	vm := func(spec string) string {
		return "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: v, namespace: vms}\nspec:\n" + spec
	}
	const tmpl = `  runStrategy: Always
  template:
    spec:
      domain: {devices: {interfaces: [{name: n, bridge: {}}]}}
      networks: [{name: n, multus: {networkName: blue}}]
`
	cudn := func(localnet string) string {
		return "apiVersion: k8s.ovn.org/v1\nkind: ClusterUserDefinedNetwork\nmetadata: {name: c}\nspec:\n  namespaceSelector: {}\n  network:\n    topology: Localnet\n    localnet:\n" + localnet
	}
	const cudnOK = "      role: Secondary\n      physicalNetworkName: physnet\n      ipam: {mode: Disabled}\n"
	nncp := func(m string) string {
		return "apiVersion: nmstate.io/v1\nkind: NodeNetworkConfigurationPolicy\nmetadata: {name: p}\nspec:\n  desiredState:\n    ovn:\n      bridge-mappings: [" + m + "]\n"
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"vm-apiversion", strings.Replace(vm(tmpl), "kubevirt.io/v1", "kubevirt.io/v1alpha3", 1), "in.yaml:1: VirtualMachine vms/v: apiVersion: "},
		{"vm-namespace", strings.Replace(vm(tmpl), ", namespace: vms", "", 1), "VirtualMachine v: metadata.namespace: required"},
		{"vm-template", vm("  running: true\n"), "VirtualMachine vms/v: spec.template: required"},
		{"vm-both-run", vm("  running: true\n" + tmpl), "spec.running: set together with spec.runStrategy"},
		{"vm-strategy", strings.Replace(vm(tmpl), "Always", "Sometimes", 1), `spec.runStrategy: "Sometimes"`},
		{"vm-no-network", strings.Replace(vm(tmpl), "networks: [{name: n, multus: {networkName: blue}}]", "networks: [{name: x, multus: {networkName: blue}}]", 1), `spec.template.spec.domain.devices.interfaces[0].name: "n" names no entry`},
		{"vm-network-name", strings.Replace(vm(tmpl), "networkName: blue", "networkName: \"\"", 1), "spec.template.spec.networks[0].multus.networkName: required"},
		{"vm-binding", strings.Replace(vm(tmpl), "bridge: {}", "masquerade: {}", 1), "spec.template.spec.domain.devices.interfaces[0]: interface \"n\" on multus network \"blue\": want bridge"},
		{"vm-mac", strings.Replace(vm(tmpl), "bridge: {}", "bridge: {}, macAddress: \"01:00:00:00:00:01\"", 1), "interfaces[0].macAddress: \"01:00:00:00:00:01\" is not a unicast"},
		{"vm-pod-only", strings.Replace(strings.Replace(vm(tmpl), "bridge: {}", "masquerade: {}", 1), "multus: {networkName: blue}", "pod: {}", 1), "spec.template.spec.networks: no multus network"},
		{"vm-netdata-version", vm(tmpl + "      volumes: [{name: ci, cloudInitNoCloud: {networkData: \"version: 1\"}}]\n"), "spec.template.spec.volumes[0].cloudInitNoCloud.networkData.version: 1: only"},
		{"vm-netdata-addr", vm(tmpl + "      volumes: [{name: ci, cloudInitNoCloud: {networkData: \"version: 2\\nethernets: {eth0: {addresses: [10.0.0.1]}}\"}}]\n"), "networkData.ethernets.eth0.addresses[0]: \"10.0.0.1\": want an address with prefix length"},
		{"vm-netdata-two-v4", vm(tmpl + "      volumes: [{name: ci, cloudInitNoCloud: {networkData: \"version: 2\\nethernets: {eth0: {addresses: [10.0.0.1/24, 10.0.0.2/24]}}\"}}]\n"), "addresses[1]: \"10.0.0.2/24\": a second address of the family"},
		{"vm-netdata-dhcp-static", vm(tmpl + "      volumes: [{name: ci, cloudInitNoCloud: {networkData: \"version: 2\\nethernets: {eth0: {dhcp4: true, addresses: [10.0.0.1/24]}}\"}}]\n"), "ethernets.eth0.dhcp4: true together with a static IPv4"},
		{"vm-gateway-offlink", vm(tmpl + "      volumes: [{name: ci, cloudInitNoCloud: {networkData: \"version: 2\\nethernets: {eth0: {addresses: [10.10.0.2/16], gateway4: 10.20.0.1}}\"}}]\n"), "ethernets.eth0.gateway4: gateway 10.20.0.1 is not on-link"},
		{"vm-gateway6-family", vm(tmpl + "      volumes: [{name: ci, cloudInitNoCloud: {networkData: \"version: 2\\nethernets: {eth0: {addresses: [10.10.0.2/16], gateway6: 10.10.0.1}}\"}}]\n"), "ethernets.eth0.gateway6: to ::/0 via 10.10.0.1: destination and gateway of different families"},
		{"vm-route-to", vm(tmpl + "      volumes: [{name: ci, cloudInitNoCloud: {networkData: \"version: 2\\nethernets: {eth0: {addresses: [10.10.0.2/16], routes: [{to: nowhere, via: 10.10.0.1}]}}\"}}]\n"), "ethernets.eth0.routes[0]: to \"nowhere\": want a prefix"},
		{"vm-netdata-b64", vm(tmpl + "      volumes: [{name: ci, cloudInitNoCloud: {networkDataBase64: \"%%%\"}}]\n"), "cloudInitNoCloud.networkDataBase64: not base64"},
		{"vm-type", vm("  template: {spec: {nodeSelector: [a]}}\n"), "VirtualMachine vms/v: spec.template.spec.nodeSelector: "},
		{"cudn-topology", strings.Replace(cudn(cudnOK), "Localnet\n", "Layer2\n", 1), `ClusterUserDefinedNetwork c: spec.network.topology: "Layer2": the testbed builds Localnet networks only`},
		{"cudn-role", cudn("      role: Primary\n      physicalNetworkName: physnet\n      ipam: {mode: Disabled}\n"), `spec.network.localnet.role: "Primary"`},
		{"cudn-physnet", cudn("      role: Secondary\n      ipam: {mode: Disabled}\n"), "spec.network.localnet.physicalNetworkName: required"},
		{"cudn-vlan-mode", cudn(cudnOK + "      vlan: {mode: Trunk}\n"), `spec.network.localnet.vlan.mode: "Trunk": only Access`},
		{"cudn-vlan-id", cudn(cudnOK + "      vlan: {mode: Access, access: {id: 5000}}\n"), "spec.network.localnet.vlan.access.id: 5000 out of range"},
		{"cudn-vlan-access", cudn(cudnOK + "      vlan: {mode: Access}\n"), "spec.network.localnet.vlan.access: required"},
		{"cudn-ipam-missing", cudn("      role: Secondary\n      physicalNetworkName: physnet\n"), "spec.network.localnet.ipam.mode: required without subnets"},
		{"cudn-ipam-type", cudn("      role: Secondary\n      physicalNetworkName: physnet\n      ipam: {type: Static}\n"), `spec.network.localnet.ipam.type: "Static", want DHCP`},
		{"cudn-dhcp-subnets", cudn("      role: Secondary\n      physicalNetworkName: physnet\n      subnets: [10.0.0.0/24]\n      ipam: {type: DHCP}\n"), "ipam.type: DHCP and spec.network.localnet.subnets are mutually exclusive"},
		{"cudn-subnet", cudn("      role: Secondary\n      physicalNetworkName: physnet\n      subnets: [nope]\n"), `spec.network.localnet.subnets[0]: "nope" is not a CIDR`},
		{"cudn-selector", strings.Replace(cudn(cudnOK), "  namespaceSelector: {}\n", "", 1), "spec.namespaceSelector: required"},
		{"cudn-namespaced", strings.Replace(cudn(cudnOK), "{name: c}", "{name: c, namespace: vms}", 1), "ClusterUserDefinedNetwork vms/c: metadata.namespace: \"vms\": a ClusterUserDefinedNetwork is cluster-scoped"},
		{"nncp-localnet", nncp("{bridge: br1}"), "NodeNetworkConfigurationPolicy p: spec.desiredState.ovn.bridge-mappings[0].localnet: required"},
		{"nncp-bridge", nncp("{localnet: physnet}"), "bridge-mappings[0].bridge: required"},
		{"nncp-state", nncp("{localnet: physnet, bridge: br1, state: gone}"), `bridge-mappings[0].state: "gone", want present or absent`},
		{"nncp-apiversion", strings.Replace(nncp("{localnet: a, bridge: b}"), "nmstate.io/v1", "nmstate.io/v1beta1", 1), "NodeNetworkConfigurationPolicy p: apiVersion: "},
		{"nad-config", "apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\nmetadata: {name: n, namespace: vms}\nspec: {config: '{'}\n", "NetworkAttachmentDefinition vms/n: spec.config: "},
		{"namespace-apiversion", "apiVersion: v2\nkind: Namespace\nmetadata: {name: x}\n", "Namespace x: apiVersion: \"v2\", want v1"},
		{"no-name", "apiVersion: v1\nkind: Namespace\nmetadata: {}\n", "Namespace : metadata.name: required"},
		{"no-kind", "apiVersion: v1\nmetadata: {name: x}\n", "in.yaml:1: document has no kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := ReadBytes([]byte(tc.doc), "in.yaml")
			if err == nil {
				_, err = Decode(objs)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "in.yaml") {
				t.Fatalf("err = %v\nwant it to start with the file and contain %q", err, tc.want)
			}
		})
	}
}

// TestMissingNAD refuses a VM whose network no NAD or CUDN provides.
func TestMissingNAD(t *testing.T) {
	s := decode(t, strings.Replace(okepSet, "networkName: provider-network-100", "networkName: elsewhere/provider-network-100", 1))
	_, err := s.Place([]string{"node0"})
	want := "VirtualMachine vms/prod-1: spec.template.spec.networks[1].multus.networkName: NAD elsewhere/provider-network-100: no NetworkAttachmentDefinition, and no ClusterUserDefinedNetwork selecting namespace elsewhere"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
}
