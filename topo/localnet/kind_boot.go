package localnet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/ovninstall"
	"github.com/nqos/nqos/internal/poll"
)

// kindNetnsPrefix prefixes the names under which a run binds the
// namespaces of a KinD cluster's node containers and pods. They are not
// under NetnsPrefix: Down never ends the processes living in them.
func kindNetnsPrefix(runID string) string { return "nqosk-" + runID + "-" }

func kindNodeNetns(runID string, i int) string { return kindNetnsPrefix(runID) + "n" + strconv.Itoa(i) }
func kindGuestNetns(runID, guest string) string {
	return kindNetnsPrefix(runID) + "vm-" + guest
}

// bootKind builds the testbed on the KinD cluster of the spec: the
// cluster's NB must hold no localnet switch (nothing of an earlier run),
// then fabric, nodes (br-phys and uplink in each node container), hosts,
// networks and their API objects. With ovnkube in the cluster the
// networks' switches are ovnkube's, made from the NADs: it waits for them.
func (t *Testbed) bootKind(ctx context.Context) error {
	k := t.st.Spec.Kind
	inst, _, err := ovninstall.Current(ctx)
	if err != nil {
		return fmt.Errorf("testbed %s: %w", t.st.RunID, err)
	}
	t.ovn = inst
	if t.restCfg, err = k.restConfig(); err != nil {
		return err
	}
	if err := t.kindClean(ctx); err != nil {
		return err
	}
	if err := t.startFabric(ctx); err != nil {
		return err
	}
	for i := 1; i <= t.st.Spec.Nodes; i++ {
		n := t.newKindNode(i, k.Nodes[i-1])
		t.st.Nodes = append(t.st.Nodes, n)
		if err := t.startKindNode(ctx, n, k.Nodes[i-1]); err != nil {
			return err
		}
	}
	networks := t.st.Spec.Networks
	if t.LSPOwner() == LSPsOVNKube { // ovnkube makes the switches from the NADs
		networks = nil
	}
	if err := t.startHostsAndNetworks(ctx, networks); err != nil {
		return err
	}
	t.st.Kubeconfig = k.Kubeconfig
	if err := t.markLogs(); err != nil {
		return err
	}
	if err := t.createNetworkObjects(ctx); err != nil {
		return err
	}
	if t.LSPOwner() == LSPsOVNKube {
		if err := t.waitOVNKubeNetworks(ctx); err != nil {
			return err
		}
	}
	return t.WaitHVSync(ctx)
}

// kindClean fails when a zone's NB holds a localnet switch (one of the
// spec's networks or any with external_ids k8s.ovn.org/topology=
// localnet): an earlier run did not tear down. The switches of ovnkube's
// default network (join, one per node) are the cluster's and stay.
func (t *Testbed) kindClean(ctx context.Context) error {
	for _, z := range t.Zones() {
		out, err := t.ZoneNBCtl(ctx, z, "--format=json", "--columns=name,external_ids", "list", "Logical_Switch")
		if err != nil {
			return err
		}
		tb, err := decodeTable(out, "NB Logical_Switch")
		if err != nil {
			return fmt.Errorf("testbed %s: zone %s: %w", t.st.RunID, z.Name, err)
		}
		names, err := localnetSwitches(tb, t.st.Spec.Networks)
		if err != nil {
			return fmt.Errorf("testbed %s: zone %s: %w", t.st.RunID, z.Name, err)
		}
		if len(names) > 0 {
			return fmt.Errorf("testbed %s: KinD cluster %s: NB of zone %s already holds localnet switches %v (an earlier run was not torn down)",
				t.st.RunID, t.st.Spec.Kind.Name, z.Name, names)
		}
	}
	return nil
}

// localnetSwitches names the rows of a Logical_Switch table (columns name
// and external_ids) that are localnet switches or the networks' switches.
func localnetSwitches(tb nbTable, networks []Network) ([]string, error) {
	var names []string
	ids := tb.column("external_ids")
	for i, c := range tb.column("name") {
		var name string
		if err := json.Unmarshal(c, &name); err != nil {
			return nil, fmt.Errorf("NB Logical_Switch name %s: %w", c, err)
		}
		m, err := ovsMap(ids[i])
		if err != nil {
			return nil, fmt.Errorf("NB Logical_Switch %s: %w", name, err)
		}
		if m["k8s.ovn.org/topology"] == "localnet" || slices.ContainsFunc(networks, func(n Network) bool { return n.Switch == name }) {
			names = append(names, name)
		}
	}
	return names, nil
}

// newKindNode declares node i (1-based) on a node container: its OVS is
// reached through the container's root.
func (t *Testbed) newKindNode(i int, kn KindNode) Node {
	up, fb := uplinkNames(t.st.RunID, i)
	return Node{Name: kn.Name, Index: i, Netns: kindNodeNetns(t.st.RunID, i), Dir: filepath.Join(t.dir, kn.Name),
		DB:      "unix:" + filepath.Join("/proc", strconv.Itoa(kn.PID), "root/run/openvswitch/db.sock"),
		EncapIP: kn.InternalIP, UplinkIf: up, FabricIf: fb, ProviderB: providerBridge}
}

// startKindNode binds the node container's namespace, makes br-phys
// (netdev) with the spec's bridge mappings in its OVS, and joins it to
// the fabric with an uplink like an embedded node's. ovn-controller,
// br-int and the geneve underlay (br-ex) are the cluster's own.
func (t *Testbed) startKindNode(ctx context.Context, n Node, kn KindNode) error {
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return fmt.Errorf("testbed %s: %s: %w", t.st.RunID, n.Name, err)
	}
	if err := t.adoptNetns(n.Netns, filepath.Join("/proc", strconv.Itoa(kn.PID), "ns/net")); err != nil {
		return err
	}
	_, err := t.VSCtl(ctx, n.Name,
		"--", "--if-exists", "del-br", providerBridge,
		"--", "add-br", providerBridge, "--", "set", "Bridge", providerBridge, "datapath_type=netdev",
		"--", "set", "Interface", providerBridge, "mtu_request="+strconv.Itoa(t.st.Spec.FabricMTU),
		"--", "set", "Open_vSwitch", ".", "external_ids:ovn-bridge-mappings="+t.st.Spec.bridgeMappings())
	if err != nil {
		return err
	}
	return t.addUplink(ctx, n)
}

// adoptNetns records and binds a namespace the cluster owns.
func (t *Testbed) adoptNetns(name, path string) error {
	t.st.Adopted = append(t.st.Adopted, name)
	if err := t.st.save(); err != nil {
		return err
	}
	if _, err := netns.Adopt(name, path); err != nil {
		return fmt.Errorf("testbed %s: %w", t.st.RunID, err)
	}
	return nil
}

// closeKind undoes what the run changed in the cluster: the networks'
// switches (with every port on them) leave the NB, each node's br-phys
// goes and its bridge mappings return to the underlay's. Switches ovnkube
// made are ovnkube's to remove: the networks' NADs are deleted and it is
// awaited.
func (t *Testbed) closeKind(ctx context.Context) error {
	var errs []error
	if t.LSPOwner() == LSPsOVNKube {
		errs = append(errs, t.removeOVNKubeNetworks(ctx))
	} else {
		for _, z := range t.Zones() {
			for _, n := range t.st.Spec.Networks {
				if _, err := t.ZoneNBCtl(ctx, z, "--if-exists", "ls-del", n.Switch); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	for _, n := range t.st.Nodes {
		_, err := t.VSCtl(ctx, n.Name, "--", "--if-exists", "del-br", providerBridge,
			"--", "set", "Open_vSwitch", ".", "external_ids:ovn-bridge-mappings="+kindUnderlayMapping)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// downKind unbinds the run's names of cluster namespaces.
func downKind(runID string) error {
	nss, err := netns.List(kindNetnsPrefix(runID))
	if err != nil {
		return err
	}
	var errs []error
	for _, ns := range nss {
		errs = append(errs, ns.Delete())
	}
	return errors.Join(errs...)
}

// waitKindChassis waits until every node of the run is a chassis in its
// zone's SB.
func (t *Testbed) waitKindChassis(ctx context.Context) error {
	return poll.Until(ctx, 30*time.Second, pollEvery, fmt.Sprintf("%d chassis in the SB", len(t.st.Nodes)), func(ctx context.Context) (bool, error) {
		for _, n := range t.st.Nodes {
			out, err := t.NodeSBCtl(ctx, n.Name, "--bare", "--columns=name", "find", "Chassis", "name="+n.Name)
			if err != nil || strings.TrimSpace(out) != n.Name {
				return false, err
			}
		}
		return true, nil
	})
}
