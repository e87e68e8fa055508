package cluster

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/nqos/nqos/tools/kind/internal/kindnode"
)

// scripts holds the shell scripts run inside the nodes (read-only).
//
//go:embed ovn/*.sh
var scripts embed.FS

// ovnNode is one node with its container, as OVN sees it: the chassis
// name is the node name, the geneve endpoint its InternalIP.
type ovnNode struct {
	node
	kn      nodes.Node
	central bool // runs OVN central (the control plane)
}

// script runs the embedded script file inside kn with args.
func script(ctx context.Context, kn nodes.Node, file string, args ...string) (string, error) {
	body, err := scripts.ReadFile("ovn/" + file)
	if err != nil {
		return "", fmt.Errorf("embedded script %s: %w", file, err)
	}
	return kindnode.Run(ctx, kn, strings.NewReader(string(body)), append([]string{"bash", "-s", "--"}, args...)...)
}

// ovnNodes pairs every API node with its container and marks the control plane.
func ovnNodes(ctx context.Context, p *cluster.Provider, name string) ([]ovnNode, error) {
	cp, err := controlPlane(p, name)
	if err != nil {
		return nil, err
	}
	all, err := p.ListNodes(name)
	if err != nil {
		return nil, fmt.Errorf("list nodes of cluster %s: %w", name, err)
	}
	byName := map[string]nodes.Node{}
	for _, n := range all {
		byName[n.String()] = n
	}
	api, err := listNodes(ctx, cp)
	if err != nil {
		return nil, err
	}
	var ns []ovnNode
	for _, n := range api {
		kn, ok := byName[n.name]
		if !ok || n.internal == "" {
			return nil, fmt.Errorf("cluster %s: node %s has no container or no InternalIP", name, n.name)
		}
		ns = append(ns, ovnNode{node: n, kn: kn, central: n.name == cp.String()})
	}
	return ns, nil
}

// startOVN starts OVN central on the control plane, then OVS (userspace
// datapath) and ovn-controller on every node, and waits until every node
// is a chassis with a netdev br-int. It prints `ovn-sbctl show` to out.
func startOVN(ctx context.Context, p *cluster.Provider, name string, out io.Writer) ([]ovnNode, error) {
	ns, err := ovnNodes(ctx, p, name)
	if err != nil {
		return nil, err
	}
	central := centralOf(ns)
	if central == nil {
		return nil, fmt.Errorf("cluster %s: no control-plane node among %d nodes", name, len(ns))
	}
	if _, err := script(ctx, central.kn, "central.sh", central.internal); err != nil {
		return nil, fmt.Errorf("OVN central on node %s: %w", central.name, err)
	}
	for _, n := range ns {
		if _, err := script(ctx, n.kn, "node.sh", n.name, n.internal, central.internal); err != nil {
			return nil, fmt.Errorf("OVS and ovn-controller on node %s: %w", n.name, err)
		}
	}
	if err := waitChassis(ctx, central, ns); err != nil {
		return nil, err
	}
	show, err := kindnode.Run(ctx, central.kn, nil, "ovn-sbctl", "show")
	if err != nil {
		return nil, fmt.Errorf("OVN southbound of cluster %s: %w", name, err)
	}
	fmt.Fprintf(out, "cluster %s: OVN up on %d nodes (userspace datapath)\n%s", name, len(ns), show)
	return ns, nil
}

func centralOf(ns []ovnNode) *ovnNode {
	for i := range ns {
		if ns[i].central {
			return &ns[i]
		}
	}
	return nil
}

// onNodes runs fn with the cluster's nodes and its control-plane node;
// when finding them or fn fails, the cluster is deleted unless retain.
func onNodes(ctx context.Context, name, kubeconfig string, retain bool, fn func(ns []ovnNode, central *ovnNode) error) (err error) {
	p := newProvider()
	defer func() {
		if err == nil || retain {
			return
		}
		if derr := p.Delete(name, kubeconfig); derr != nil {
			err = errors.Join(err, fmt.Errorf("delete failed cluster %s: %w", name, derr))
		}
	}()
	ns, err := ovnNodes(ctx, p, name)
	if err != nil {
		return err
	}
	central := centralOf(ns)
	if central == nil {
		return fmt.Errorf("cluster %s: no control-plane node", name)
	}
	return fn(ns, central)
}
