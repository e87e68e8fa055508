// Package kindnode runs commands in the node containers of a KinD
// cluster and finds the cluster's nodes.
package kindnode

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

// Run runs argv in node n with stdin (may be nil) and returns its
// stdout; a failure names the command and the node and carries stderr.
func Run(ctx context.Context, n nodes.Node, stdin io.Reader, argv ...string) (string, error) {
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

// List lists the nodes of cluster name and picks its (first)
// control-plane node.
func List(p *cluster.Provider, name string) (cp nodes.Node, all []nodes.Node, err error) {
	all, err = p.ListNodes(name)
	if err != nil {
		return nil, nil, fmt.Errorf("nodes of cluster %s: %w", name, err)
	}
	if len(all) == 0 {
		return nil, nil, fmt.Errorf("cluster %s has no nodes (make kind-up RUN_ID=%s)", name, strings.TrimPrefix(name, "nqos-"))
	}
	for _, n := range all {
		role, err := n.Role()
		if err != nil {
			return nil, nil, fmt.Errorf("role of node %s: %w", n, err)
		}
		if role == constants.ControlPlaneNodeRoleValue && cp == nil {
			cp = n
		}
	}
	if cp == nil {
		return nil, nil, fmt.Errorf("cluster %s has no control-plane node", name)
	}
	return cp, all, nil
}
