package manifests

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// NodeKind is a v1 Node: in a manifest set it gives a testbed node (by
// name: node1, node2, …) its labels.
const NodeKind = "Node"

// Node is a cluster node as placement sees it: its name and labels.
type Node struct {
	Name   string
	Labels map[string]string
}

// DefaultNode is a testbed node carrying the labels every testbed node
// carries (NodeLabels) plus extra (which may override the worker role,
// never the hostname).
func DefaultNode(name string, extra map[string]string) Node {
	l := map[string]string(NodeLabels(name))
	maps.Copy(l, extra)
	l[LabelHostname] = name
	return Node{Name: name, Labels: l}
}

// DefaultNodes are the named nodes with the default labels only.
func DefaultNodes(names []string) []Node {
	out := make([]Node, len(names))
	for i, n := range names {
		out[i] = DefaultNode(n, nil)
	}
	return out
}

// NodeNames are the nodes' names, in order.
func NodeNames(nodes []Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

// String is the node with its labels, sorted: node1{a=b,c=}.
func (n Node) String() string {
	keys := slices.Sorted(maps.Keys(n.Labels))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if k == LabelHostname {
			continue
		}
		parts = append(parts, k+"="+n.Labels[k])
	}
	return n.Name + "{" + strings.Join(parts, ",") + "}"
}

// selects reports whether a nodeSelector (an empty one selects every
// node) matches the node.
func selects(selector map[string]string, n Node) bool {
	return labels.SelectorFromSet(selector).Matches(labels.Set(n.Labels))
}

// Selector prints a nodeSelector deterministically: {k=v, k2=v2}.
func Selector(selector map[string]string) string {
	keys := slices.Sorted(maps.Keys(selector))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%s", k, selector[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// NodeList prints nodes with their labels, for messages.
func NodeList(nodes []Node) string {
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = n.String()
	}
	return strings.Join(parts, ", ")
}

// checkNode validates a Node object: v1, and labels the API server takes.
func checkNode(o *Object) error {
	if o.APIVersion != "v1" {
		return o.errf("apiVersion", "%q, want v1", o.APIVersion)
	}
	l := nodeObjectLabels(o)
	for _, k := range slices.Sorted(maps.Keys(l)) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return o.errf("metadata.labels."+k, "invalid label key: %s", strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(l[k]); len(errs) > 0 {
			return o.errf("metadata.labels."+k, "invalid label value %q: %s", l[k], strings.Join(errs, "; "))
		}
	}
	return nil
}

// nodeObjectLabels are a Node object's metadata.labels.
func nodeObjectLabels(o *Object) map[string]string {
	meta, _ := o.Raw["metadata"].(map[string]any)
	lm, _ := meta["labels"].(map[string]any)
	out := map[string]string{}
	for k, v := range lm {
		out[k] = fmt.Sprint(v)
	}
	return out
}

// Labelled are the named testbed nodes with the labels the set's Node
// objects give them; a Node object naming no testbed node is an error.
func (s *Set) Labelled(names []string) ([]Node, error) {
	extra := map[string]map[string]string{}
	for _, o := range s.Nodes {
		if !slices.Contains(names, o.Name) {
			return nil, o.errf("metadata.name", "%q is not a testbed node (nodes: %s)", o.Name, strings.Join(names, ", "))
		}
		extra[o.Name] = nodeObjectLabels(o)
	}
	out := make([]Node, len(names))
	for i, n := range names {
		out[i] = DefaultNode(n, extra[n])
	}
	return out, nil
}
