package scenarios

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/nqos/nqos/scenarios/manifests"
)

// MaxNodes bounds topology.nodes.
const MaxNodes = 8

// NodesDecl is topology.nodes: a count (nodes: 3), or a list of nodes
// whose entries carry a name and labels. Every node carries
// kubernetes.io/hostname and node-role.kubernetes.io/worker; a list
// entry's labels are added (and may override the worker role).
type NodesDecl struct {
	Count int
	List  []NodeDecl
}

// NodeDecl is one node of the list form. The testbed names its nodes
// node1, node2, … in order: a name, when given, must be that one.
type NodeDecl struct {
	Name   string            `yaml:"name"`
	Labels map[string]string `yaml:"labels"`
}

func (n *NodesDecl) decodeNode(d *decoder, y *yaml.Node, path string) error {
	switch {
	case y.Kind == yaml.SequenceNode:
		return d.slice(y, reflect.ValueOf(&n.List).Elem(), path)
	case y.Kind == yaml.ScalarNode && y.Tag == "!!int":
		return d.scalar(y, reflect.ValueOf(&n.Count).Elem(), path)
	}
	return d.errf(y, path, "expected a node count or a list of nodes ({name, labels}), got %s", kindName(y))
}

// nodes validates topology.nodes and fills Nodes and NodeList.
func (v *validator) nodes() error {
	t := &v.sc.Topology
	t.Nodes = t.NodesDecl.Count
	if t.NodesDecl.List != nil {
		t.Nodes = len(t.NodesDecl.List)
	}
	if t.Nodes < 1 || t.Nodes > MaxNodes {
		return v.d.errAt("topology.nodes", "nodes must be 1..%d, got %d", MaxNodes, t.Nodes)
	}
	t.NodeList = make([]manifests.Node, t.Nodes)
	for i := range t.NodeList {
		name := manifests.NodeHostname(i + 1)
		var extra map[string]string
		if t.NodesDecl.List != nil {
			nd := t.NodesDecl.List[i]
			path := fmt.Sprintf("topology.nodes[%d]", i)
			if nd.Name != "" && nd.Name != name {
				return v.d.errAt(path+".name", "%q: the testbed names its nodes node1..node%d in order; this one is %s", nd.Name, t.Nodes, name)
			}
			if err := v.nodeLabels(name, nd.Labels, path+".labels"); err != nil {
				return err
			}
			extra = nd.Labels
		}
		t.NodeList[i] = manifests.DefaultNode(name, extra)
	}
	return nil
}

// nodeLabels checks a node's labels as the API server would.
func (v *validator) nodeLabels(node string, l map[string]string, path string) error {
	for _, k := range slices.Sorted(maps.Keys(l)) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return v.d.errAt(path+"."+k, "node %s: invalid label key: %s", node, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(l[k]); len(errs) > 0 {
			return v.d.errAt(path+"."+k, "node %s: invalid label value %q: %s", node, l[k], strings.Join(errs, "; "))
		}
		if k == manifests.LabelHostname && l[k] != node {
			return v.d.errAt(path+"."+k, "node %s: %s is the node's name, not %q", node, k, l[k])
		}
	}
	return nil
}

// LabelsNodes reports whether topology.nodes gives a node labels.
func (sc *Scenario) LabelsNodes() bool {
	return slices.ContainsFunc(sc.Topology.NodesDecl.List, func(n NodeDecl) bool { return len(n.Labels) > 0 })
}
