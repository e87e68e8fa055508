package cluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/constants"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
)

// node is one kind node as the API server sees it.
type node struct {
	name     string // also the container name
	podCIDR  string
	internal string // InternalIP
}

// controlPlane returns the cluster's (first) control-plane node.
func controlPlane(p *cluster.Provider, name string) (nodes.Node, error) {
	all, err := p.ListNodes(name)
	if err != nil {
		return nil, fmt.Errorf("list nodes of cluster %s: %w", name, err)
	}
	for _, n := range all {
		role, err := n.Role()
		if err != nil {
			return nil, fmt.Errorf("role of node %s: %w", n, err)
		}
		if role == constants.ControlPlaneNodeRoleValue {
			return n, nil
		}
	}
	return nil, fmt.Errorf("cluster %s has no control-plane node", name)
}

// run runs argv in n with stdin, returning stdout; stderr is in the error.
func run(ctx context.Context, n nodes.Node, stdin io.Reader, argv ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	c := n.CommandContext(ctx, argv[0], argv[1:]...).SetStdout(&stdout).SetStderr(&stderr)
	if stdin != nil {
		c.SetStdin(stdin)
	}
	if err := c.Run(); err != nil {
		return "", fmt.Errorf("%s on node %s: %w: %s", strings.Join(argv, " "), n, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// kubectl runs kubectl with the admin kubeconfig inside the control plane.
func kubectl(ctx context.Context, cp nodes.Node, args ...string) (string, error) {
	return run(ctx, cp, nil, append([]string{"kubectl", "--kubeconfig=/etc/kubernetes/admin.conf"}, args...)...)
}

// listNodes reads every node's name, podCIDR and InternalIP.
func listNodes(ctx context.Context, cp nodes.Node) ([]node, error) {
	out, err := kubectl(ctx, cp, "get", "nodes", "-o",
		`jsonpath={range .items[*]}{.metadata.name} {.spec.podCIDR} {.status.addresses[?(@.type=="InternalIP")].address}{"\n"}{end}`)
	if err != nil {
		return nil, err
	}
	var ns []node
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		n := node{}
		if len(f) > 0 {
			n.name = f[0]
		}
		if len(f) == 3 {
			n.podCIDR, n.internal = f[1], f[2]
		}
		if n.name != "" {
			ns = append(ns, n)
		}
	}
	return ns, nil
}
