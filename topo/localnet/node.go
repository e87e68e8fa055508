package localnet

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/nqos/nqos/internal/netns"
)

const (
	providerBridge = "br-phys"
	integBridge    = "br-int"
	// ofctrlWaitBeforeClear keeps the old flows for this many ms after an
	// ovn-controller restart, so no packet is lost.
	ofctrlWaitBeforeClear = "1000"
)

// bridgeMappings maps every physical network of the spec to br-phys.
func (s Spec) bridgeMappings() string {
	seen := map[string]bool{}
	var out []string
	for _, n := range s.Networks {
		if !seen[n.PhysicalNetworkName] {
			seen[n.PhysicalNetworkName] = true
			out = append(out, n.PhysicalNetworkName+":"+providerBridge)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// newNode declares node i (1-based).
func (t *Testbed) newNode(i int) Node {
	name := NodeName(i)
	dir := filepath.Join(t.dir, name)
	up, fb := uplinkNames(t.st.RunID, i)
	return Node{Name: name, Index: i, Netns: nodeNetns(t.st.RunID, name), Dir: dir,
		DB: "unix:" + filepath.Join(dir, "db.sock"), EncapIP: fmt.Sprintf("172.31.0.%d", i),
		UplinkIf: up, FabricIf: fb, ProviderB: providerBridge}
}

// nodeEnv makes the OVS/OVN tools of a node use its own run directory.
func nodeEnv(n Node) []string {
	return []string{"OVS_RUNDIR=" + n.Dir, "OVN_RUNDIR=" + n.Dir, "OVS_DBDIR=" + n.Dir, "OVS_LOGDIR=" + n.Dir}
}

// startNode builds one node: namespace, OVS database and vswitchd,
// bridges, uplink into the fabric, and ovn-controller.
func (t *Testbed) startNode(ctx context.Context, n Node) error {
	if err := t.prepareOVSNode(ctx, n); err != nil {
		return err
	}
	if err := t.configureNodeOVS(ctx, n); err != nil {
		return err
	}
	if err := t.addUplink(ctx, n); err != nil {
		return err
	}
	return t.startOVNController(ctx, n)
}

// prepareOVSNode creates the namespace and OVS database of a node (or of
// the fabric) and starts its ovsdb-server and ovs-vswitchd inside it.
func (t *Testbed) prepareOVSNode(ctx context.Context, n Node) error {
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return fmt.Errorf("testbed %s: %s: %w", t.st.RunID, n.Name, err)
	}
	if err := t.addNetns(n.Netns); err != nil {
		return err
	}
	db := filepath.Join(n.Dir, "conf.db")
	if _, err := t.run.run(ctx, "", nil, "ovsdb-tool", "create", db, t.ovn.VSwitchSchema()); err != nil {
		return fmt.Errorf("testbed %s: %s: %w", t.st.RunID, n.Name, err)
	}
	odb := t.ovsdbDaemon(n.Name, DaemonNodeDB, n.Netns, db, filepath.Join(n.Dir, "db.sock"),
		"--remote=db:Open_vSwitch,Open_vSwitch,manager_options")
	odb.Env = nodeEnv(n)
	if err := t.addDaemon(ctx, odb); err != nil {
		return err
	}
	if _, err := t.VSCtl(ctx, n.Name, "--no-wait", "init"); err != nil {
		return err
	}
	vsd := daemonState{Node: n.Name, Name: DaemonVSwitchd, Netns: n.Netns, Env: nodeEnv(n),
		Pidfile: filepath.Join(n.Dir, DaemonVSwitchd+".pid"), Log: t.logPath(n.Name + "-" + DaemonVSwitchd),
		Argv: []string{"ovs-vswitchd", n.DB, "--pidfile=" + filepath.Join(n.Dir, DaemonVSwitchd+".pid"),
			"--unixctl=" + filepath.Join(n.Dir, DaemonVSwitchd+".ctl"),
			"--log-file=" + t.logPath(n.Name+"-"+DaemonVSwitchd), "--detach", "--no-chdir"}}
	return t.addDaemon(ctx, vsd)
}

// configureNodeOVS creates br-int and br-phys (netdev datapath) and the
// Open_vSwitch external_ids ovn-controller reads (ovn-remote: the SB of
// the node's zone).
func (t *Testbed) configureNodeOVS(ctx context.Context, n Node) error {
	z, err := t.ZoneOf(n.Name)
	if err != nil {
		return err
	}
	_, err = t.VSCtl(ctx, n.Name,
		"--", "add-br", integBridge, "--", "set", "Bridge", integBridge, "datapath_type=netdev", "fail_mode=secure",
		"other_config:disable-in-band=true",
		"--", "add-br", providerBridge, "--", "set", "Bridge", providerBridge, "datapath_type=netdev",
		"--", "set", "Interface", providerBridge, "mtu_request="+strconv.Itoa(t.st.Spec.FabricMTU),
		"--", "set", "Open_vSwitch", ".",
		"external_ids:system-id="+n.Name,
		"external_ids:hostname="+n.Name,
		"external_ids:ovn-remote="+z.SB,
		"external_ids:ovn-encap-type=geneve",
		"external_ids:ovn-encap-ip="+n.EncapIP,
		"external_ids:ovn-bridge-mappings="+t.st.Spec.bridgeMappings(),
		"external_ids:ovn-bridge-datapath-type=netdev",
		"external_ids:ovn-ofctrl-wait-before-clear="+ofctrlWaitBeforeClear,
	)
	if err != nil {
		return err
	}
	return t.setProviderIP(n)
}

// setProviderIP (re)adds the encap IP to br-phys's internal port; it is
// lost whenever ovs-vswitchd re-creates its taps.
func (t *Testbed) setProviderIP(n Node) error {
	encap, err := netip.ParsePrefix(n.EncapIP + "/24")
	if err == nil {
		err = withLinks(n.Netns, func(c *netns.Conn) error {
			if err := c.ReplaceAddr(providerBridge, encap); err != nil {
				return err
			}
			return c.Up(providerBridge)
		})
	}
	if err != nil {
		return fmt.Errorf("testbed %s: node %s: provider bridge address: %w", t.st.RunID, n.Name, err)
	}
	return nil
}

// addUplink joins br-phys to the fabric bridge with a veth whose fabric
// end is a trunk of every network VLAN (untagged VLAN 1 carries geneve).
func (t *Testbed) addUplink(ctx context.Context, n Node) error {
	v := veth{a: n.UplinkIf, aNetns: n.Netns, b: n.FabricIf, bNetns: fabricNetns(t.st.RunID), mtu: t.st.Spec.FabricMTU}
	if err := t.addVethPair(v); err != nil {
		return err
	}
	if _, err := t.VSCtl(ctx, n.Name, "add-port", providerBridge, n.UplinkIf); err != nil {
		return err
	}
	return t.joinFabric(ctx, n.FabricIf, -1)
}

// startOVNController starts ovn-controller under its own monitor
// (--monitor, as ovn-ctl starts it and as a pod's restart policy keeps
// it): a crash (an abort, a segfault) restarts it, and Crashes reports
// it. A kill or a stop (the restart steps) ends the monitor too. Seen on
// OVN 25.03.0: an idl assertion aborts ovn-controller when an LSP rename
// and the re-point of its VIF reach it in one iteration.
func (t *Testbed) startOVNController(ctx context.Context, n Node) error {
	d := daemonState{Node: n.Name, Name: DaemonOVNController, Netns: n.Netns, Env: nodeEnv(n),
		Pidfile: filepath.Join(n.Dir, DaemonOVNController+".pid"), Log: t.logPath(n.Name + "-" + DaemonOVNController),
		Argv: []string{"ovn-controller", n.DB, "--pidfile=" + filepath.Join(n.Dir, DaemonOVNController+".pid"),
			"--log-file=" + t.logPath(n.Name+"-"+DaemonOVNController), "--detach", "--monitor", "--no-chdir"}}
	return t.addDaemon(ctx, d)
}

// VSCtl runs ovs-vsctl against a node's OVS database.
func (t *Testbed) VSCtl(ctx context.Context, node string, args ...string) (string, error) {
	n, ok := t.st.node(node)
	if node == FabricName {
		n, ok = t.st.Fabric, true
	}
	if !ok {
		return "", fmt.Errorf("testbed %s: no node %q", t.st.RunID, node)
	}
	out, err := t.run.run(ctx, n.Netns, nodeEnv(n), append([]string{"ovs-vsctl", "--db=" + n.DB, "--timeout=20"}, args...)...)
	if err != nil {
		return out, fmt.Errorf("testbed %s: node %s: %w", t.st.RunID, node, err)
	}
	return out, nil
}
