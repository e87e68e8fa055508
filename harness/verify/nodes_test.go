package verify

import (
	"strings"
	"testing"

	"github.com/nqos/nqos/scenarios/manifests"
)

// TestBuildNodeObjects: Node objects label the testbed nodes, so an NNCP
// selecting a node group places the VMs on that group, in the plan and
// in the scenario verify runs alike.
func TestBuildNodeObjects(t *testing.T) {
	var objs []*manifests.Object
	for _, o := range readDir(t, "../../examples/okep-localnet") {
		if o.Kind == manifests.NNCPKind {
			o.Raw["spec"].(map[string]any)["nodeSelector"] = map[string]any{"example.com/localnet-group": "a"}
		}
		objs = append(objs, o)
	}
	nodes, err := manifests.ReadBytes([]byte("apiVersion: v1\nkind: Node\nmetadata: {name: node2, labels: {example.com/localnet-group: a}}\n"), "nodes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(append(objs, nodes...), "okep+nodes", Options{Families: []Family{V4}, OVN: "23.03.1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, vm := range p.Scenario.Topology.VMs {
		if vm.Node != 1 || !strings.Contains(vm.Placement, "by NNCP") {
			t.Errorf("VM %s on node index %d (%s), want 1: node2 is group a's only node", vm.Name, vm.Node, vm.Placement)
		}
	}
	if l := p.Scenario.Topology.NodeList[1].Labels["example.com/localnet-group"]; l != "a" {
		t.Errorf("node2 labels %v", p.Scenario.Topology.NodeList[1].Labels)
	}
}
