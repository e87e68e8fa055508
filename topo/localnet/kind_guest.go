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
	"github.com/nqos/nqos/internal/poll"
)

// External IDs the nqos-cni plugin writes on the br-int port it makes for
// a pod's NIC (cmd/nqos-cni): the pod's network namespace (a path inside
// the node container) and the NIC's name there.
const (
	cniNetnsKey  = "nqos-cni/netns"
	cniIfnameKey = "nqos-cni/ifname"
)

// kindPlugTimeout bounds the wait for a pod's port: the kubelet starts
// the sandbox and runs the CNI plugins.
const kindPlugTimeout = 90 * time.Second

// GuestNIC is the name of a guest's NIC i (0-based): eth<i> in an
// embedded guest, pod<i+1> in a launcher pod on a KinD cluster (the name
// its networks annotation asks the CNI plugin for, as KubeVirt names a
// launcher pod's secondary interfaces).
func (t *Testbed) GuestNIC(i int) string { return t.cluster().guestNIC(i) }

// LauncherImage is the image launcher pods run on a KinD cluster ("":
// the testbed runs no pods, any image does).
func (t *Testbed) LauncherImage() string { return t.cluster().launcherImage() }

// kindPort is the br-int port the CNI plugin made for a pod NIC.
type kindPort struct {
	name, netns, ifname string
}

// findKindPort reads the br-int port bound to lsp on node; ok is false
// while there is none.
func (t *Testbed) findKindPort(ctx context.Context, node, lsp string) (kindPort, bool, error) {
	out, err := t.VSCtl(ctx, node, "--format=json", "--columns=name,external_ids", "find", "Interface", "external_ids:iface-id="+lsp)
	if err != nil {
		return kindPort{}, false, err
	}
	tb, err := decodeTable(out, "OVS Interface iface-id="+lsp)
	if err != nil || len(tb.Data) == 0 {
		return kindPort{}, false, err
	}
	if len(tb.Data) > 1 {
		return kindPort{}, false, fmt.Errorf("node %s: %d ports with iface-id %s, want 1", node, len(tb.Data), lsp)
	}
	var name string
	if err := json.Unmarshal(tb.column("name")[0], &name); err != nil {
		return kindPort{}, false, fmt.Errorf("node %s: port of %s: name: %w", node, lsp, err)
	}
	ids, err := ovsMap(tb.column("external_ids")[0])
	if err != nil {
		return kindPort{}, false, fmt.Errorf("node %s: port %s: %w", node, name, err)
	}
	p := kindPort{name: name, netns: ids[cniNetnsKey], ifname: ids[cniIfnameKey]}
	if p.netns == "" || p.ifname == "" {
		return kindPort{}, false, fmt.Errorf("node %s: port %s for %s lacks %s or %s: not made by nqos-cni", node, name, lsp, cniNetnsKey, cniIfnameKey)
	}
	return p, true, nil
}

// ovsMap decodes an OVSDB map column of ovs-vsctl's JSON output:
// ["map", [[k, v], ...]].
func ovsMap(raw json.RawMessage) (map[string]string, error) {
	var m [2]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("decode map %s: %w", raw, err)
	}
	var pairs [][2]string
	if err := json.Unmarshal(m[1], &pairs); err != nil {
		return nil, fmt.Errorf("decode map %s: %w", raw, err)
	}
	out := map[string]string{}
	for _, kv := range pairs {
		out[kv[0]] = kv[1]
	}
	return out, nil
}

// plugKindGuest waits until the node's kubelet has run the pod's CNI
// plugins and nqos-cni has put the pod's NIC p.NIC on br-int bound to
// p.IfaceID, then binds the pod's namespace as the guest's (first NIC)
// and checks the NIC's MAC. Called with t.mu held.
func (t *Testbed) plugKindGuest(ctx context.Context, p GuestPlug) error {
	if p.Standby {
		return fmt.Errorf("testbed %s: guest %s: a standby port on %s: %w", t.st.RunID, p.Guest, p.Node, ErrNotSupported)
	}
	var port kindPort
	err := poll.Until(ctx, kindPlugTimeout, 100*time.Millisecond, "nqos-cni port for "+p.IfaceID+" on "+p.Node, func(ctx context.Context) (bool, error) {
		var ok bool
		var err error
		port, ok, err = t.findKindPort(ctx, p.Node, p.IfaceID)
		return ok, err
	})
	if err != nil {
		return fmt.Errorf("testbed %s: guest %s: %w", t.st.RunID, p.Guest, err)
	}
	if port.ifname != p.NIC {
		return fmt.Errorf("testbed %s: guest %s: nqos-cni made NIC %s for %s, the VM expects %s", t.st.RunID, p.Guest, port.ifname, p.IfaceID, p.NIC)
	}
	gns := kindGuestNetns(t.st.RunID, p.Guest)
	if !slices.Contains(t.st.Adopted, gns) {
		kn, ok := t.kindNode(p.Node)
		if !ok {
			return fmt.Errorf("testbed %s: guest %s: no KinD node %s", t.st.RunID, p.Guest, p.Node)
		}
		path := filepath.Join("/proc", strconv.Itoa(kn.PID), "root", inContainer(port.netns))
		if err := t.adoptNetns(gns, path); err != nil {
			return err
		}
	}
	if err := t.checkKindNIC(gns, p); err != nil {
		return err
	}
	t.st.Plugs = append(t.st.Plugs, plugState{Guest: p.Guest, Node: p.Node, NIC: p.NIC, NodeIf: port.name, IfaceID: p.IfaceID,
		GuestIfc: p.NIC, Active: true})
	return t.st.save()
}

// checkKindNIC checks the pod NIC's MAC and turns IPv6 DAD off on it, as
// on an embedded guest NIC.
func (t *Testbed) checkKindNIC(gns string, p GuestPlug) error {
	mac, err := t.LinkMAC(gns, p.NIC)
	if err != nil {
		return err
	}
	if p.MAC != "" && !strings.EqualFold(mac.String(), p.MAC) {
		return fmt.Errorf("testbed %s: guest %s: NIC %s has MAC %s, the networks annotation asks %s", t.st.RunID, p.Guest, p.NIC, mac, p.MAC)
	}
	ns := netns.Named(gns)
	for _, kv := range [][2]string{
		{"net.ipv6.conf." + p.NIC + ".accept_dad", "0"},
		{"net.ipv4.conf." + p.NIC + ".arp_evict_nocarrier", "0"},
	} {
		if err := ns.Sysctl(kv[0], kv[1]); err != nil {
			return fmt.Errorf("testbed %s: guest %s: %w", t.st.RunID, p.Guest, err)
		}
	}
	return nil
}

// inContainer rewrites a path of a node container for the walk from its
// /proc/<pid>/root: an absolute symlink met on the way resolves against
// this root instead, and the one every such path starts with is /var/run
// (-> /run).
func inContainer(path string) string {
	if rest, ok := strings.CutPrefix(path, "/var/run/"); ok {
		return "/run/" + rest
	}
	return path
}

func (t *Testbed) kindNode(name string) (KindNode, bool) {
	return byName(t.st.Spec.Kind.Nodes, name, func(x KindNode) string { return x.Name })
}

// removeKindGuest waits until every port of the guest has left br-int
// (the pod is gone: the kubelet ran the CNI plugins' DEL) and unbinds the
// guest's namespace. Called with t.mu held.
func (t *Testbed) removeKindGuest(ctx context.Context, guest string) error {
	for _, p := range t.st.Plugs {
		if p.Guest != guest {
			continue
		}
		err := poll.Until(ctx, kindPlugTimeout, 100*time.Millisecond, "port "+p.NodeIf+" of "+p.IfaceID+" gone from "+p.Node, func(ctx context.Context) (bool, error) {
			_, ok, err := t.findKindPort(ctx, p.Node, p.IfaceID)
			return !ok, err
		})
		if err != nil {
			return fmt.Errorf("testbed %s: guest %s: %w", t.st.RunID, guest, err)
		}
	}
	t.st.Plugs = slices.DeleteFunc(t.st.Plugs, func(p plugState) bool { return p.Guest == guest })
	gns := kindGuestNetns(t.st.RunID, guest)
	if slices.Contains(t.st.Adopted, gns) {
		if err := netns.Named(gns).Delete(); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("testbed %s: guest %s: %w", t.st.RunID, guest, err)
		}
		t.st.Adopted = slices.DeleteFunc(t.st.Adopted, func(n string) bool { return n == gns })
	}
	t.st.Guests = slices.DeleteFunc(t.st.Guests, func(g string) bool { return g == guest })
	return t.st.save()
}
