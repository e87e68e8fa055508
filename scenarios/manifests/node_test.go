package manifests

import (
	"strings"
	"testing"
)

// groupNodes are three nodes, two in localnet group a and one in b.
func groupNodes() []Node {
	return []Node{
		DefaultNode("node1", map[string]string{"example.com/localnet-group": "a"}),
		DefaultNode("node2", map[string]string{"example.com/localnet-group": "b"}),
		DefaultNode("node3", map[string]string{"example.com/localnet-group": "a"}),
	}
}

// groupSet is okepSet with its NNCP selecting the nodes of group a, as
// the OpenShift documentation writes it.
func groupSet(t *testing.T) *Set {
	t.Helper()
	return decode(t, strings.Replace(okepSet, "nodeSelector: {kubernetes.io/hostname: node0}", "nodeSelector: {example.com/localnet-group: a}", 1))
}

// TestNNCPGroupLabel places a VM on a node an NNCP selects by a group
// label and says why.
func TestNNCPGroupLabel(t *testing.T) {
	s := groupSet(t)
	s.VMs = append(s.VMs, &VirtualMachine{Object: s.VMs[0].Object, Name: "b", Namespace: "vms", NICs: s.VMs[0].NICs, Running: true})
	r, err := s.PlaceOn(groupNodes())
	if err != nil {
		t.Fatal(err)
	}
	if r[0].Node != "node1" || r[1].Node != "node3" {
		t.Fatalf("nodes = %s, %s, want node1, node3 (group a, spread)", r[0].Node, r[1].Node)
	}
	want := "no nodeSelector (any of 3 nodes); localnet provider-network mapped on node1, node3 by NNCP network-config; spread: fewest VMs on node3"
	if r[1].Decided != want {
		t.Fatalf("decided = %q\nwant      %q", r[1].Decided, want)
	}
}

// TestNNCPSelectsNoNode refuses a policy that applies nowhere, naming
// the file, the object and the selector.
func TestNNCPSelectsNoNode(t *testing.T) {
	s := decode(t, strings.Replace(okepSet, "nodeSelector: {kubernetes.io/hostname: node0}", "nodeSelector: {example.com/localnet-group: c}", 1))
	_, err := s.PlaceOn(groupNodes())
	want := "in.yaml:10: NodeNetworkConfigurationPolicy network-config: spec.nodeSelector: {example.com/localnet-group=c} selects no node (nodes: node1{example.com/localnet-group=a,node-role.kubernetes.io/worker=}"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err = %v\nwant prefix %s", err, want)
	}
}

// TestVMSelectsNoNode gives the scheduler's reason for a VM whose
// nodeSelector matches no node, and for one whose nodes do not map its
// localnet.
func TestVMSelectsNoNode(t *testing.T) {
	s := groupSet(t)
	s.VMs[0].NodeSelector = map[string]string{"example.com/localnet-group": "c"}
	r, err := s.PlaceOn(groupNodes())
	if err != nil {
		t.Fatal(err)
	}
	if want := "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."; r[0].Node != "" || r[0].Why != want {
		t.Fatalf("selector c: node %q why %q, want %q", r[0].Node, r[0].Why, want)
	}
	s.VMs[0].NodeSelector = map[string]string{"example.com/localnet-group": "b"}
	if r, err = s.PlaceOn(groupNodes()); err != nil {
		t.Fatal(err)
	}
	want := `0/3 nodes are available: 1 node(s) didn't map localnet "provider-network" (no NodeNetworkConfigurationPolicy bridge-mapping), 2 node(s) didn't match Pod's node affinity/selector.`
	if r[0].Node != "" || r[0].Why != want {
		t.Fatalf("selector b: node %q why %q\nwant %q", r[0].Node, r[0].Why, want)
	}
}

// TestDefaultNode keeps the hostname whatever the extra labels say.
func TestDefaultNode(t *testing.T) {
	n := DefaultNode("node2", map[string]string{LabelHostname: "x", LabelWorker: "no"})
	if n.Labels[LabelHostname] != "node2" || n.Labels[LabelWorker] != "no" || n.String() != "node2{node-role.kubernetes.io/worker=no}" {
		t.Fatalf("node = %+v (%s)", n, n)
	}
}

// nodeObjects label node1 and node3 group a, node2 group b.
const nodeObjects = `---
apiVersion: v1
kind: Node
metadata: {name: node1, labels: {example.com/localnet-group: a}}
---
apiVersion: v1
kind: Node
metadata: {name: node2, labels: {example.com/localnet-group: b}}
---
apiVersion: v1
kind: Node
metadata: {name: node3, labels: {example.com/localnet-group: a}}
`

// TestNodeObjects: Node objects in a set label the testbed nodes Place
// places on; one naming no testbed node, or with an invalid label, is
// refused naming it.
func TestNodeObjects(t *testing.T) {
	s := decode(t, strings.Replace(okepSet, "nodeSelector: {kubernetes.io/hostname: node0}", "nodeSelector: {example.com/localnet-group: b}", 1)+nodeObjects)
	r, err := s.Place([]string{"node1", "node2", "node3"})
	if err != nil {
		t.Fatal(err)
	}
	if r[0].Node != "node2" {
		t.Fatalf("placed on %q, want node2 (the only group b node)", r[0].Node)
	}
	if _, err := s.Place([]string{"node1", "node2"}); err == nil || !strings.Contains(err.Error(), `Node node3: metadata.name: "node3" is not a testbed node (nodes: node1, node2)`) {
		t.Fatalf("two nodes: err = %v", err)
	}
	_, err = Decode(mustRead(t, strings.Replace(nodeObjects, "localnet-group: b}", "localnet-group: \"b c\"}", 1)))
	if err == nil || !strings.Contains(err.Error(), `in.yaml:6: Node node2: metadata.labels.example.com/localnet-group: invalid label value "b c"`) {
		t.Fatalf("bad label: err = %v", err)
	}
}
