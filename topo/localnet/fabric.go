package localnet

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
)

// FabricName names the fabric switch in VSCtl, RestartDaemon and logs.
const FabricName = "fabric"

func fabricBridge(runID string) string { return "nq" + runID + "fab" }

// addNetns records and creates a namespace of the run.
func (t *Testbed) addNetns(name string) error {
	t.st.Netns = append(t.st.Netns, name)
	if err := t.st.save(); err != nil {
		return err
	}
	if err := addNetns(name); err != nil {
		return fmt.Errorf("testbed %s: %w", t.st.RunID, err)
	}
	return nil
}

// addVethPair creates a veth pair with fresh unique ifindexes.
func (t *Testbed) addVethPair(v veth) error {
	idx := t.st.nextIfindex()
	if err := t.st.save(); err != nil {
		return err
	}
	if err := addVeth(v, idx); err != nil {
		return fmt.Errorf("testbed %s: %w", t.st.RunID, err)
	}
	return nil
}

// startFabric creates the fabric: a namespace with a VLAN-aware L2
// switch. This kernel has neither bridge VLAN filtering nor 8021q nor tc
// classifiers, so the switch is an OVS bridge (own ovsdb-server and
// ovs-vswitchd, netdev datapath, NORMAL learning): node uplinks are
// trunks, host ports access ports of their VLAN.
func (t *Testbed) startFabric(ctx context.Context) error {
	f := Node{Name: FabricName, Netns: fabricNetns(t.st.RunID), Dir: filepath.Join(t.dir, FabricName)}
	f.DB = "unix:" + filepath.Join(f.Dir, "db.sock")
	t.st.Fabric = f
	if err := t.prepareOVSNode(ctx, f); err != nil {
		return err
	}
	br := fabricBridge(t.st.RunID)
	_, err := t.VSCtl(ctx, FabricName, "add-br", br, "--", "set", "Bridge", br, "datapath_type=netdev",
		"fail_mode=standalone", "other_config:mac-aging-time=300",
		"--", "set", "Interface", br, "mtu_request="+strconv.Itoa(t.st.Spec.FabricMTU))
	return err
}

// joinFabric adds ifname to the fabric switch: a trunk of every VLAN
// (untagged frames on VLAN 0) when access < 0, else an access port of
// VLAN access (0: untagged network).
func (t *Testbed) joinFabric(ctx context.Context, ifname string, access int) error {
	args := []string{"add-port", fabricBridge(t.st.RunID), ifname}
	if access >= 0 {
		args = append(args, "--", "set", "Port", ifname, "vlan_mode=access")
		if access > 0 {
			args = append(args, "tag="+strconv.Itoa(access))
		}
	}
	_, err := t.VSCtl(ctx, FabricName, args...)
	return err
}
