package intent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nqos/nqos/scenarios/manifests"
)

func readText(tb testing.TB, text string) []*manifests.Object {
	tb.Helper()
	objs, err := manifests.ReadBytes([]byte(text), "bench.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	return objs
}

// explainObjects decodes, places and explains objects read from
// manifests on nodes.
func explainObjects(tb testing.TB, objs []*manifests.Object, nodes []string, fams []Family) *View {
	tb.Helper()
	set, err := manifests.Decode(objs)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := FromSet(set, nodes)
	if err != nil {
		tb.Fatal(err)
	}
	v, err := Explain(c, Options{OVN: "23.03", Families: fams})
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func readExample(tb testing.TB, dir string) string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("../../examples", dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("examples/%s: %v", dir, err)
	}
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(data)
		b.WriteString("\n")
	}
	return b.String()
}

// BenchmarkExplainOKEP explains the OKEP worked example, both families,
// from its manifests' text (target: under 100 ms).
func BenchmarkExplainOKEP(b *testing.B) {
	text := readExample(b, "okep-localnet")
	for b.Loop() {
		if v := explainObjects(b, readText(b, text), []string{"node1", "node2"}, []Family{V4, V6}); len(v.Probes) != 13 {
			b.Fatalf("%d classes, want 13", len(v.Probes))
		}
	}
}

// largeSet is objects NetworkQoS and vms VMs over 10 namespaces on one
// CUDN: object i selects the VMs labelled app=a<i> (vms/objects each)
// with a catch-all rule and a metered NFS rule to 10.20.0.0/16.
func largeSet(objects, vms int) string {
	var b strings.Builder
	b.WriteString(`apiVersion: nmstate.io/v1
kind: NodeNetworkConfigurationPolicy
metadata: {name: map}
spec: {desiredState: {ovn: {bridge-mappings: [{localnet: physnet, bridge: br1, state: present}]}}}
---
apiVersion: k8s.ovn.org/v1
kind: ClusterUserDefinedNetwork
metadata: {name: tenant, labels: {net: tenant}}
spec:
  namespaceSelector: {matchLabels: {tenant: "yes"}}
  network: {topology: Localnet, localnet: {role: Secondary, physicalNetworkName: physnet, ipam: {mode: Disabled}}}
`)
	for n := range 10 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: ns%d, labels: {tenant: \"yes\"}}\n", n)
	}
	for i := range objects {
		fmt.Fprintf(&b, `---
apiVersion: k8s.ovn.org/v1alpha1
kind: NetworkQoS
metadata: {name: q%d, namespace: ns%d}
spec:
  networkSelectors:
  - networkSelectionType: ClusterUserDefinedNetworks
    clusterUserDefinedNetworkSelector: {networkSelector: {matchLabels: {net: tenant}}}
  podSelector: {matchLabels: {app: a%d}}
  priority: %d
  egress:
  - dscp: 46
  - dscp: 8
    bandwidth: {rate: 100000}
    classifier: {to: [{ipBlock: {cidr: 10.20.0.0/16}}], ports: [{protocol: TCP, port: 2049}]}
`, i, i%10, i, 10+i%90)
	}
	for j := range vms {
		i := j % objects
		fmt.Fprintf(&b, `---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: vm%d, namespace: ns%d}
spec:
  runStrategy: Always
  template:
    metadata: {labels: {app: a%d}}
    spec:
      domain: {devices: {interfaces: [{name: t, bridge: {}}]}}
      networks: [{name: t, multus: {networkName: tenant}}]
      volumes:
      - name: c
        cloudInitNoCloud:
          networkData: |
            version: 2
            ethernets:
              eth0: {addresses: [10.%d.%d.%d/8]}
`, j, i%10, i, 100+j/65536, (j/256)%256, j%256)
	}
	return b.String()
}

// BenchmarkExplainLarge explains 1000 NetworkQoS objects selecting
// 10 000 VMs on 20 nodes, IPv4 (target: under 5 s per explain: the
// objects' decoding, placement, compilation and derivation; the YAML
// text is parsed once, outside the loop).
func BenchmarkExplainLarge(b *testing.B) {
	objs := readText(b, largeSet(1000, 10000))
	nodes := make([]string, 20)
	for i := range nodes {
		nodes[i] = manifests.NodeHostname(i + 1)
	}
	for b.Loop() {
		v := explainObjects(b, objs, nodes, []Family{V4})
		if len(v.Probes) != 10000*6 || len(v.Meters) == 0 {
			b.Fatalf("%d classes, %d meters; want 60000 and some", len(v.Probes), len(v.Meters))
		}
	}
}
