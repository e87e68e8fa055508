package deploy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/constants"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/exec"
)

// inNode runs argv inside node n, stdin from in (may be nil), and returns
// its stdout; a failure carries the command's output.
func inNode(ctx context.Context, n nodes.Node, in io.Reader, argv ...string) (string, error) {
	cmd := n.CommandContext(ctx, argv[0], argv[1:]...)
	if in != nil {
		cmd.SetStdin(in)
	}
	var stdout bytes.Buffer
	if err := cmd.SetStdout(&stdout).Run(); err != nil {
		msg := ""
		if re := exec.RunErrorForError(err); re != nil {
			msg = strings.TrimSpace(string(re.Output))
		}
		return "", fmt.Errorf("node %s: %s: %w: %s", n, strings.Join(argv, " "), err, msg)
	}
	return stdout.String(), nil
}

// clusterNodes lists the kind nodes of cluster name and picks its
// control-plane node.
func clusterNodes(p *cluster.Provider, name string) (cp nodes.Node, all []nodes.Node, err error) {
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
