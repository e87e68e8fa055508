package manifests

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
)

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
