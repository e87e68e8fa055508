package scenarios

import (
	"strings"
	"testing"
)

// groupBase is vmBase on three labelled nodes with its NNCP selecting
// the nodes of localnet group a.
var groupBase = strings.NewReplacer(
	"  nodes: 2\n", `  nodes:
    - {name: node1, labels: {example.com/localnet-group: a}}
    - {labels: {example.com/localnet-group: b}}
    - {name: node3, labels: {example.com/localnet-group: a}}
`,
	"    metadata: {name: map}\n    spec:\n", "    metadata: {name: map}\n    spec:\n      nodeSelector: {example.com/localnet-group: a}\n",
	"nodeSelector: {kubernetes.io/hostname: node1}", "nodeSelector: {example.com/localnet-group: a}",
).Replace(vmBase)

// TestNodeList places the manifests' VMs on the nodes the NNCP selects
// by a group label, and says why.
func TestNodeList(t *testing.T) {
	sc, err := Parse([]byte(groupBase), "group.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if sc.Topology.Nodes != 3 || sc.Topology.NodeList[1].Labels["example.com/localnet-group"] != "b" || sc.Topology.NodeList[1].Name != "node2" {
		t.Fatalf("nodes = %d %+v", sc.Topology.Nodes, sc.Topology.NodeList)
	}
	if !sc.LabelsNodes() {
		t.Fatal("LabelsNodes() = false for labelled nodes")
	}
	a, b := sc.VM("vm-a"), sc.VM("vm-b")
	if a.Node != 0 || b.Node != 2 {
		t.Fatalf("vm-a on %d, vm-b on %d, want 0 and 2 (group a, spread)", a.Node, b.Node)
	}
	want := "nodeSelector {example.com/localnet-group=a} matches node1, node3; localnet physnet mapped on node1, node3 by NNCP map; spread: fewest VMs on node1"
	if a.Placement != want {
		t.Fatalf("vm-a placement = %q\nwant %q", a.Placement, want)
	}
}

// startFailsStep expects vm-a not to start.
const startFailsStep = "  - expect: {vms: [{vm: vm-a, startFails: {reason: \"0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.\"}}]}\n"

// TestStartFails accepts a VM no node runs when a startFails check
// expects it, and does not boot it.
func TestStartFails(t *testing.T) {
	text := strings.Replace(groupBase, "nodeSelector: {example.com/localnet-group: a}\n          domain", "nodeSelector: {example.com/localnet-group: c}\n          domain", 1)
	text = text[:strings.Index(text, "flows:")] + "steps:\n  - apply: [ns, blue]\n" + startFailsStep
	sc, err := Parse([]byte(text), "fails.yaml")
	if err != nil {
		t.Fatal(err)
	}
	u := sc.Unstarted("vm-a")
	if sc.VM("vm-a") != nil || u == nil || u.Reason != "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector." || u.Manifest != "vm-a" {
		t.Fatalf("vm-a booted %v, unstarted %+v", sc.VM("vm-a") != nil, u)
	}
	if got := sc.Steps[1].Describe(); !strings.Contains(got, "VM vm-a does not start") {
		t.Fatalf("describe = %q", got)
	}
}

// wantParseError replaces old (which base must hold) with new and wants
// the parse of the result, as file, to fail with an error holding want.
func wantParseError(t *testing.T, base, file, old, new, want string) {
	t.Helper()
	if !strings.Contains(base, old) {
		t.Fatalf("base has no %q", old)
	}
	_, err := Parse([]byte(strings.Replace(base, old, new, 1)), file)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v\nwant %q", err, want)
	}
}

// TestPlacementErrors: each no-node case names the file, the object or
// field and the selector.
func TestPlacementErrors(t *testing.T) {
	for _, tc := range []struct{ name, old, new, want string }{
		{"nncp-selects-no-node", "nodeSelector: {example.com/localnet-group: a}\n      desiredState", "nodeSelector: {example.com/localnet-group: z}\n      desiredState",
			"group.yaml:26: manifests.nncp.spec.nodeSelector: NodeNetworkConfigurationPolicy map: {example.com/localnet-group=z} selects no node (nodes: node1{example.com/localnet-group=a,node-role.kubernetes.io/worker=}, node2{example.com/localnet-group=b,node-role.kubernetes.io/worker=}, node3{example.com/localnet-group=a,node-role.kubernetes.io/worker=})"},
		{"vm-selects-no-node", "nodeSelector: {example.com/localnet-group: a}\n          domain", "nodeSelector: {example.com/localnet-group: c}\n          domain",
			"manifests.vm-a.spec.template.spec.nodeSelector: VirtualMachine vms/vm-a would not start: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. (nodeSelector {example.com/localnet-group=c}; nodes: node1{"},
		{"vm-group-unmapped", "nodeSelector: {example.com/localnet-group: a}\n          domain", "nodeSelector: {example.com/localnet-group: b}\n          domain",
			`VirtualMachine vms/vm-a would not start: 0/3 nodes are available: 1 node(s) didn't map localnet "physnet" (no NodeNetworkConfigurationPolicy bridge-mapping), 2 node(s) didn't match Pod's node affinity/selector.`},
		{"node-name", "- {name: node3,", "- {name: worker-c,",
			`group.yaml:7: topology.nodes[2].name: "worker-c": the testbed names its nodes node1..node3 in order; this one is node3`},
		{"node-label", "{example.com/localnet-group: b}}", "{example.com/localnet-group: \"b c\"}}",
			`topology.nodes[1].labels.example.com/localnet-group: node node2: invalid label value "b c"`},
		{"node-hostname", "{example.com/localnet-group: b}}", "{kubernetes.io/hostname: node9}}",
			`topology.nodes[1].labels.kubernetes.io/hostname: node node2: kubernetes.io/hostname is the node's name, not "node9"`},
		{"node-count-type", "  nodes:\n    - {name: node1", "  nodes: {}\n  x:\n    - {name: node1",
			`topology.nodes: expected a node count or a list of nodes ({name, labels}), got a mapping`},
		{"start-fails-not-vm", "  - apply: [ns, blue]\n", "  - apply: [ns, blue]\n" + strings.Replace(startFailsStep, "vm: vm-a", "vm: ext", 1),
			`steps[1].expect.vms[0].vm: "ext" is not the VM of a VirtualMachine manifest`},
		{"start-fails-empty", "  - apply: [ns, blue]\n", "  - apply: [ns, blue]\n  - expect: {vms: [{vm: vm-a, startFails: {reason: \"\"}}]}\n",
			`steps[1].expect.vms[0].startFails.reason: empty reason`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantParseError(t, groupBase, "group.yaml", tc.old, tc.new, tc.want)
		})
	}
}
