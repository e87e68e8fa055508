package localnet

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// kindBackend is the testbed on a KinD cluster (kind_boot.go,
// kind_guest.go, kind_lsp.go, kind_networks.go): OVN, the kubelets and
// the nqos-cni plugin are the cluster's; the run adds the fabric, the
// uplinks and the hosts.
type kindBackend struct {
	t *Testbed
	k *KindCluster
}

func (c kindBackend) checkSpec(s Spec) error {
	if s.Nodes > len(c.k.Nodes) {
		return fmt.Errorf("testbed %s: spec.Nodes %d: KinD cluster %s has %d nodes: %w", s.RunID, s.Nodes, c.k.Name, len(c.k.Nodes), ErrNotSupported)
	}
	if s.Topology != c.k.topology() {
		return fmt.Errorf("testbed %s: spec.Topology %s: KinD cluster %s runs %s: %w", s.RunID, s.Topology, c.k.Name, c.k.topology(), ErrNotSupported)
	}
	return nil
}

func (c kindBackend) boot(ctx context.Context) error {
	if err := c.t.bootKind(ctx); err != nil {
		return err
	}
	return c.t.waitKindChassis(ctx)
}

func (c kindBackend) close(ctx context.Context) error { return c.t.closeKind(ctx) }

func (c kindBackend) waitChassis(ctx context.Context) error { return c.t.waitKindChassis(ctx) }

// zones are the cluster's: on interconnect one per node of the cluster
// (control plane first, the order the run takes its nodes in), its NB and
// SB on TCP at the node's InternalIP, named after the node as ovnkube's
// zone controller and `nqos-kind up` name it; a node the run does not use
// still runs a controller of the DaemonSet, so its NB is checked too. On
// central the one in the control plane.
func (c kindBackend) zones() []Zone {
	if c.k.topology() != Interconnect {
		var nodes []string
		for _, n := range c.t.st.Nodes {
			nodes = append(nodes, n.Name)
		}
		return []Zone{{Name: GlobalZone, Nodes: nodes, NB: c.k.NB(), SB: c.k.SB()}}
	}
	zs := make([]Zone, 0, len(c.k.Nodes))
	for _, n := range c.k.Nodes {
		zs = append(zs, Zone{Name: n.Name, Nodes: []string{n.Name}, Owner: n.Name,
			NB: nodeAddr(n.InternalIP, kindNBPort), SB: nodeAddr(n.InternalIP, kindSBPort)})
	}
	return zs
}

// lspOwner is the mode `nqos-kind up -lsp` recorded.
func (c kindBackend) lspOwner() LSPOwner {
	if c.k.LSPs == KindLSPOVNKube {
		return LSPsOVNKube
	}
	return LSPsTestbed
}

// guestNetns is the launcher pod's namespace, bound once the pod's NIC is
// plugged.
func (c kindBackend) guestNetns(guest string) string { return kindGuestNetns(c.t.st.RunID, guest) }

// guestNIC is pod<i+1>: the name the launcher pod's networks annotation
// asks the CNI plugin for, as KubeVirt names a launcher pod's secondary
// interfaces.
func (kindBackend) guestNIC(i int) string { return "pod" + strconv.Itoa(i+1) }

func (kindBackend) launcherImage() string { return kindLauncherImage }

// addGuest records the guest only: its namespace is the launcher pod's,
// bound at the first plug.
func (c kindBackend) addGuest(string) error { return c.t.st.save() }

func (c kindBackend) plugGuest(ctx context.Context, _ Node, p GuestPlug) error {
	return c.t.plugKindGuest(ctx, p)
}

func (c kindBackend) unplugGuest(_ context.Context, guest, node, _ string) error {
	return fmt.Errorf("testbed %s: unplug guest %s on %s (its pod's CNI DEL does): %w", c.t.st.RunID, guest, node, ErrNotSupported)
}

func (c kindBackend) activatePlug(_ context.Context, guest, _, _ string) error {
	return fmt.Errorf("testbed %s: activate a standby port of guest %s: %w", c.t.st.RunID, guest, ErrNotSupported)
}

func (c kindBackend) removeGuest(ctx context.Context, guest string) error {
	return c.t.removeKindGuest(ctx, guest)
}

func (c kindBackend) restartable(node, daemon string) error {
	return fmt.Errorf("testbed %s: restart %s on %q: the daemons are KinD cluster %s's: %w", c.t.st.RunID, daemon, node, c.k.Name, ErrNotSupported)
}

// logPatterns are the OVS and OVN logs inside the nodes the run uses and
// ovnkube's output in each (where a Go panic lands): the master or zone
// controller, and the cluster manager in the control plane.
func (c kindBackend) logPatterns() []string {
	var patterns []string
	for _, n := range c.k.Nodes[:max(1, min(len(c.t.st.Nodes), len(c.k.Nodes)))] {
		root := filepath.Join("/proc", strconv.Itoa(n.PID), "root")
		patterns = append(patterns, filepath.Join(root, "var/log/openvswitch/*.log"), filepath.Join(root, "var/log/ovn/*.log"),
			filepath.Join(root, "var/log/ovn-kubernetes/*.stdout"))
	}
	return patterns
}

// logName prefixes a log inside a node container with the node's name.
func (c kindBackend) logName(path string) string {
	for _, n := range c.k.Nodes {
		if strings.HasPrefix(path, filepath.Join("/proc", strconv.Itoa(n.PID), "root")+"/") {
			return n.Name + "-" + filepath.Base(path)
		}
	}
	return filepath.Base(path)
}

// centralExec runs argv in the control-plane node container.
func (c kindBackend) centralExec(ctx context.Context, argv ...string) (string, error) {
	out, err := c.k.docker(ctx, append([]string{"exec", c.k.Nodes[0].Name}, argv...)...)
	if err != nil {
		return out, fmt.Errorf("testbed %s: %w", c.t.st.RunID, err)
	}
	return out, nil
}

// ofTarget reaches br-int through the node container's root.
func (kindBackend) ofTarget(n Node) string {
	return strings.TrimSuffix(n.DB, "db.sock") + integBridge + ".mgmt"
}
