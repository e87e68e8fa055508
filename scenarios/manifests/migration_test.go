package manifests

import (
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/qos"
)

func migrationObject(t *testing.T, doc string) *Object {
	t.Helper()
	objs, err := ReadBytes([]byte(doc), "m.yaml")
	if err != nil || len(objs) != 1 {
		t.Fatalf("%v (%d objects)", err, len(objs))
	}
	return objs[0]
}

func TestDecodeMigration(t *testing.T) {
	m, err := DecodeMigration(migrationObject(t, "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstanceMigration\nmetadata: {name: m, namespace: vms}\nspec: {vmiName: a, addedNodeSelector: {zone: b}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.VMIKey() != "vms/a" || m.AddedNodeSelector["zone"] != "b" {
		t.Errorf("decoded %+v", m)
	}
	for _, c := range []struct{ doc, want string }{
		{"apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstanceMigration\nmetadata: {name: m, namespace: vms}\nspec: {}\n",
			"m.yaml:1: VirtualMachineInstanceMigration vms/m: spec.vmiName: vmiName is missing"},
		{"apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstanceMigration\nmetadata: {name: m}\nspec: {vmiName: a}\n",
			"metadata.namespace: required"},
		{"apiVersion: kubevirt.io/v1alpha3\nkind: VirtualMachineInstanceMigration\nmetadata: {name: m, namespace: vms}\nspec: {vmiName: a}\n",
			"apiVersion: \"kubevirt.io/v1alpha3\", want kubevirt.io/v1"},
		{"apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstanceMigration\nmetadata: {name: m, namespace: vms}\nspec: {vmiName: [a]}\n",
			"spec.vmiName"},
	} {
		_, err := DecodeMigration(migrationObject(t, c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.doc, err, c.want)
		}
	}
}

// placement: one localnet "physnet" mapped where the policies say.
func placement(sel map[string]string, policies ...*NNCP) Placement {
	nodes := []string{"node1", "node2", "node3"}
	return Placement{NodeSelector: sel, Networks: []qos.Network{{Name: "blue", PhysicalNetworkName: "physnet"}},
		Mappings: NodeMappings(policies, nodes)}
}

func mappedOn(node string) *NNCP {
	sel := map[string]string{}
	if node != "" {
		sel[LabelHostname] = node
	}
	return &NNCP{NodeSelector: sel, Mappings: []BridgeMapping{{Localnet: "physnet", Bridge: "br", Present: true}}}
}

func TestDecideMigration(t *testing.T) {
	nodes := DefaultNodes([]string{"node1", "node2", "node3"})
	mig := &Migration{Name: "m", Namespace: "vms", VMI: "a"}
	pinned := &Migration{Name: "m", Namespace: "vms", VMI: "a", AddedNodeSelector: map[string]string{LabelHostname: "node3"}}
	on1 := VMIState{Running: true, Node: "node1"}
	for _, c := range []struct {
		name   string
		mig    *Migration
		p      Placement
		vmi    VMIState
		load   map[string]int
		target string
		reason string
		msg    []string
	}{
		{"least loaded other node", mig, placement(nil), on1, map[string]int{"node2": 2, "node3": 1}, "node3", "", nil},
		{"tie in node order", mig, placement(nil), on1, nil, "node2", "", nil},
		{"never the source", mig, placement(nil), on1, map[string]int{"node2": 5, "node3": 5}, "node2", "", nil},
		{"added node selector", pinned, placement(nil), on1, nil, "node3", "", nil},
		{"not running", mig, placement(nil), VMIState{}, nil, "", ReasonAdmission,
			[]string{`admission webhook "migration-create-validator.kubevirt.io" denied the request: the VMI "vms/a" does not exist`}},
		{"pinned by nodeSelector", mig, placement(map[string]string{LabelHostname: "node1"}), on1, nil, "", ReasonUnschedulable,
			[]string{"Migration target pod for VMI [vms/a] is currently unschedulable: 0/3 nodes are available: ",
				"1 node(s) didn't match pod anti-affinity rules", "2 node(s) didn't match Pod's node affinity/selector"}},
		{"localnet mapped on the source only", mig, placement(nil, mappedOn("node1")), on1, nil, "", ReasonUnschedulable,
			[]string{`1 node(s) didn't match pod anti-affinity rules, 2 node(s) didn't map localnet "physnet" (no NodeNetworkConfigurationPolicy bridge-mapping).`}},
		{"localnet mapped on node2 only of the others", mig, placement(nil, mappedOn("node1"), mappedOn("node2")), on1, nil, "node2", "", nil},
		{"added selector on an unmapped node", pinned, placement(nil, mappedOn("node1"), mappedOn("node2")), on1, nil, "", ReasonUnschedulable,
			[]string{"1 node(s) didn't match Pod's node affinity/selector", `1 node(s) didn't map localnet "physnet"`}},
	} {
		target, r := Decide(c.mig, c.p, c.vmi, nodes, c.load)
		switch {
		case c.reason == "" && (r != nil || target != c.target):
			t.Errorf("%s: got %q %v, want target %s", c.name, target, r, c.target)
		case c.reason != "" && (r == nil || r.Reason != c.reason || target != ""):
			t.Errorf("%s: got %q %v, want refusal %s", c.name, target, r, c.reason)
		case r != nil:
			for _, m := range c.msg {
				if !strings.Contains(r.Message, m) {
					t.Errorf("%s: message %q lacks %q", c.name, r.Message, m)
				}
			}
		}
	}
}
